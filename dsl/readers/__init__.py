"""What ifr reads back: the cells of a workbook, as untrusted input, and its edited inputs."""
