package org.raidfive.bench;

import java.util.Arrays;

/**
 * Spread of repeated measurements: min, median, max, mean and coefficient of variation (sample
 * standard deviation over mean). Immutable.
 */
public record Stats(int n, double min, double median, double max, double mean, double cv) {
    /** Spread above this (as CV) earns a warning: differences smaller than it are noise. */
    public static final double SPREAD_WARNING = 0.05;

    public static Stats of(double... values) {
        if (values.length == 0) {
            throw new IllegalArgumentException("no values to summarise");
        }
        double[] v = values.clone();
        Arrays.sort(v);
        int n = v.length;
        double median = n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
        double sum = 0;
        for (double x : v) {
            sum += x;
        }
        double mean = sum / n;
        double cv = 0;
        if (n > 1 && mean != 0) {
            double sq = 0;
            for (double x : v) {
                sq += (x - mean) * (x - mean);
            }
            cv = Math.sqrt(sq / (n - 1)) / Math.abs(mean);
        }
        return new Stats(n, v[0], median, v[n - 1], mean, cv);
    }

    /** Per-pair ratios {@code numerators[i] / denominators[i]} (pairs taken in the same round). */
    public static Stats ofRatios(double[] numerators, double[] denominators) {
        if (numerators.length != denominators.length) {
            throw new IllegalArgumentException(
                    "ratio needs pairs: " + numerators.length + " vs " + denominators.length);
        }
        double[] r = new double[numerators.length];
        for (int i = 0; i < r.length; i++) {
            r[i] = numerators[i] / denominators[i];
        }
        return of(r);
    }

    /** (max - min) / median: the whole range, relative. */
    public double range() {
        return median == 0 ? 0 : (max - min) / median;
    }

    public boolean spreadTooHigh() {
        return cv > SPREAD_WARNING;
    }
}
