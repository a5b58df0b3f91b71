package org.raidfive.counter;

public enum CounterMode { ATOMIC, PERCPU }
