"""External rating studies: import ratings made elsewhere and measure them (see importing, selectors)."""
