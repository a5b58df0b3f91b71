raid fail --member m3; raid write 1% degraded; raid re-add --member m3 (recovery of the marked chunks)
