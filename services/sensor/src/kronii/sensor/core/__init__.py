"""The sensor's core: the daemon state machine of seed 000 as data, with no I/O. Time is passed in."""
