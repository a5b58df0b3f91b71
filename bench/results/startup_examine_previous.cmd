DIR/raid-previous examine DIR/m0.img
