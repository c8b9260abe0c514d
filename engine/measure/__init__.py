"""Measurements: signal metrics, perceptual scores, comparisons, log-mel features."""
