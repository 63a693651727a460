"""The projector (``felt projector``): each finished hand from the streams into the archive."""
