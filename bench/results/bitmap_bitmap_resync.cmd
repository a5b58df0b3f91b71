raid grow --bitmap internal (mdadm's default chunk); DirtyWriter 1% then SIGKILL; raid rebuild (resync of the set bits)
