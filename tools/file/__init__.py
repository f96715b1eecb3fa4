"""The kli file surface: read, find, search, write and edit with hashline anchors and repair."""
