"""The docked panels and small windows."""
