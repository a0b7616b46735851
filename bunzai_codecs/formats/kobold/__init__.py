"""KoboldAI (KoboldAI Lite, KoboldCpp, the KoboldAI client): story saves and world info exports."""
