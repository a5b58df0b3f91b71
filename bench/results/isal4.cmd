../shared/peers/xor-isal 4 65536
