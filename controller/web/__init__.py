"""Web sign and consoles."""
