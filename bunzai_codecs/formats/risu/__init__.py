"""RisuAI: .charx cards (and the JPEG+ZIP hybrid), .risum modules, lorebook and regex exports, .risup presets, persona PNGs."""
