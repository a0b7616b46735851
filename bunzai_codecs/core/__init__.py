"""Format-agnostic machinery: entity, sniff, codec contract, registry, containers, diff, errors."""
