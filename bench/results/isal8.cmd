../shared/peers/xor-isal 8 65536
