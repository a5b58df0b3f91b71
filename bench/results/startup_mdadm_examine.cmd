/usr/sbin/mdadm --examine DIR/m0.img
