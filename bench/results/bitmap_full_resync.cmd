raid create --size 4G --consistency-policy resync (4 file members); DirtyWriter 1% then SIGKILL; raid rebuild (full resync)
