raid fail + remove m3; raid add --force --spare m3; raid rebuild (full recovery)
