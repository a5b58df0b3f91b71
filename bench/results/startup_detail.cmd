./raid detail DIR/m0.img DIR/m1.img DIR/m2.img DIR/m3.img
