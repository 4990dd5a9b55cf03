"""Each page's part of the composition root: `build(deps)` makes its adapters and use cases once at start."""
