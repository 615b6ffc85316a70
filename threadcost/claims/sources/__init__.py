"""Claims declared per source (one module each) and their selectors."""
