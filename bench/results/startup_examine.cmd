./raid examine DIR/m0.img
