"""gitio."""
