package org.raidfive.bench;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.FontMetrics;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import javax.imageio.ImageIO;

/**
 * A bar chart of medians with min-max whiskers, one bar per configuration, written as SVG (by hand)
 * or PNG (java.awt, headless). The format follows the file name's extension.
 */
public final class Chart {
    /** One bar: the median, and the min and max of the repeats as a whisker. */
    public record Bar(String label, double min, double median, double max) {}

    private static final int WIDTH = 900;
    private static final int BAR_ROW = 34;
    private static final int LEFT = 230;
    private static final int RIGHT = 130;
    private static final int TOP = 56;
    private static final int BOTTOM = 46;
    private static final String[] PALETTE = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948"};

    private final String title;
    private final String unit;
    private final List<Bar> bars;

    public Chart(String title, String unit, List<Bar> bars) {
        if (bars.isEmpty()) {
            throw new IllegalArgumentException("a chart needs at least one bar");
        }
        this.title = title;
        this.unit = unit;
        this.bars = List.copyOf(bars);
    }

    /** IOPS per variant of one report. */
    public static Chart ofIops(BenchReport report) {
        List<Bar> bars = new ArrayList<>();
        for (BenchReport.Summary s : report.summaries()) {
            Stats i = s.iops();
            bars.add(new Bar(s.variant().label(), i.min(), i.median(), i.max()));
        }
        BenchConfig c = report.config();
        return new Chart(
                "IOPS, " + c.rw() + " bs=" + Sizes.format(c.bs()) + " numjobs=" + c.numjobs() + " iodepth="
                        + c.iodepth() + " (median, whiskers min-max of " + c.repeat() + ")",
                "IOPS",
                bars);
    }

    public void write(Path file) throws IOException {
        String name = file.getFileName().toString().toLowerCase(Locale.ROOT);
        if (name.endsWith(".svg")) {
            Files.writeString(file, toSvg(), StandardCharsets.UTF_8);
        } else if (name.endsWith(".png")) {
            System.setProperty("java.awt.headless", "true");
            if (!ImageIO.write(toImage(), "png", file.toFile())) {
                throw new IOException("no PNG writer available for " + file);
            }
        } else {
            throw new IllegalArgumentException("chart file " + file + " must end in .svg or .png");
        }
    }

    private int height() {
        return TOP + BOTTOM + BAR_ROW * bars.size();
    }

    private double scaleMax() {
        double m = 0;
        for (Bar b : bars) {
            m = Math.max(m, Math.max(b.max(), b.median()));
        }
        return niceCeiling(m);
    }

    static double niceCeiling(double v) {
        if (v <= 0) {
            return 1;
        }
        double p = Math.pow(10, Math.floor(Math.log10(v)));
        for (double f : new double[] {1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10}) {
            if (f * p >= v) {
                return f * p;
            }
        }
        return 10 * p;
    }

    private double x(double value, double max) {
        return LEFT + (WIDTH - LEFT - RIGHT) * value / max;
    }

    static String human(double v) {
        if (v >= 1e9) {
            return trim(v / 1e9) + "G";
        }
        if (v >= 1e6) {
            return trim(v / 1e6) + "M";
        }
        if (v >= 1e3) {
            return trim(v / 1e3) + "k";
        }
        return trim(v);
    }

    private static String trim(double v) {
        String s = String.format(Locale.ROOT, v >= 100 ? "%.0f" : v >= 10 ? "%.1f" : "%.2f", v);
        return s.contains(".") ? s.replaceAll("0+$", "").replaceAll("\\.$", "") : s;
    }

    public String toSvg() {
        double max = scaleMax();
        int h = height();
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(
                Locale.ROOT,
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                        + "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"13\">%n",
                WIDTH,
                h,
                WIDTH,
                h));
        sb.append(String.format(Locale.ROOT, "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>%n", WIDTH, h));
        sb.append(String.format(
                Locale.ROOT,
                "<text x=\"%d\" y=\"24\" font-size=\"15\" font-weight=\"bold\">%s</text>%n",
                12,
                escape(title)));
        int plotBottom = h - BOTTOM;
        for (int t = 0; t <= 4; t++) {
            double v = max * t / 4;
            double gx = x(v, max);
            sb.append(String.format(
                    Locale.ROOT,
                    "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#ddd\"/>%n",
                    gx,
                    TOP - 6,
                    gx,
                    plotBottom));
            sb.append(String.format(
                    Locale.ROOT,
                    "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" fill=\"#555\">%s</text>%n",
                    gx,
                    plotBottom + 18,
                    human(v)));
        }
        sb.append(String.format(
                Locale.ROOT,
                "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" fill=\"#555\">%s</text>%n",
                x(max / 2, max),
                plotBottom + 36,
                escape(unit)));
        for (int i = 0; i < bars.size(); i++) {
            Bar b = bars.get(i);
            int y = TOP + i * BAR_ROW;
            double x0 = x(0, max);
            double xm = x(b.median(), max);
            String color = PALETTE[i % PALETTE.length];
            sb.append(String.format(
                    Locale.ROOT,
                    "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>%n",
                    LEFT - 8,
                    y + 19,
                    escape(b.label())));
            sb.append(String.format(
                    Locale.ROOT,
                    "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"/>%n",
                    x0,
                    y + 5,
                    xm - x0,
                    BAR_ROW - 10,
                    color));
            double lo = x(b.min(), max);
            double hi = x(b.max(), max);
            int cy = y + BAR_ROW / 2;
            sb.append(String.format(
                    Locale.ROOT,
                    "<g stroke=\"#222\" stroke-width=\"1.5\"><line x1=\"%.1f\" y1=\"%d\" "
                            + "x2=\"%.1f\" y2=\"%d\"/><line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>"
                            + "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/></g>%n",
                    lo,
                    cy,
                    hi,
                    cy,
                    lo,
                    cy - 6,
                    lo,
                    cy + 6,
                    hi,
                    cy - 6,
                    hi,
                    cy + 6));
            sb.append(String.format(
                    Locale.ROOT,
                    "<text x=\"%.1f\" y=\"%d\" fill=\"#222\">%s</text>%n",
                    Math.max(hi, xm) + 8,
                    y + 19,
                    human(b.median())));
        }
        sb.append("</svg>\n");
        return sb.toString();
    }

    public BufferedImage toImage() {
        double max = scaleMax();
        int h = height();
        BufferedImage img = new BufferedImage(WIDTH, h, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = img.createGraphics();
        try {
            g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
            g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
            g.setColor(Color.WHITE);
            g.fillRect(0, 0, WIDTH, h);
            g.setColor(Color.BLACK);
            g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 15));
            g.drawString(title, 12, 24);
            g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 13));
            FontMetrics fm = g.getFontMetrics();
            int plotBottom = h - BOTTOM;
            for (int t = 0; t <= 4; t++) {
                double v = max * t / 4;
                int gx = (int) Math.round(x(v, max));
                g.setColor(new Color(0xdd, 0xdd, 0xdd));
                g.drawLine(gx, TOP - 6, gx, plotBottom);
                g.setColor(new Color(0x55, 0x55, 0x55));
                String s = human(v);
                g.drawString(s, gx - fm.stringWidth(s) / 2, plotBottom + 18);
            }
            g.drawString(unit, (int) x(max / 2, max) - fm.stringWidth(unit) / 2, plotBottom + 36);
            for (int i = 0; i < bars.size(); i++) {
                Bar b = bars.get(i);
                int y = TOP + i * BAR_ROW;
                int x0 = (int) Math.round(x(0, max));
                int xm = (int) Math.round(x(b.median(), max));
                g.setColor(Color.BLACK);
                g.drawString(b.label(), LEFT - 8 - fm.stringWidth(b.label()), y + 19);
                g.setColor(Color.decode(PALETTE[i % PALETTE.length]));
                g.fillRect(x0, y + 5, Math.max(1, xm - x0), BAR_ROW - 10);
                int lo = (int) Math.round(x(b.min(), max));
                int hi = (int) Math.round(x(b.max(), max));
                int cy = y + BAR_ROW / 2;
                g.setColor(new Color(0x22, 0x22, 0x22));
                g.setStroke(new BasicStroke(1.5f));
                g.drawLine(lo, cy, hi, cy);
                g.drawLine(lo, cy - 6, lo, cy + 6);
                g.drawLine(hi, cy - 6, hi, cy + 6);
                g.drawString(human(b.median()), Math.max(hi, xm) + 8, y + 19);
            }
        } finally {
            g.dispose();
        }
        return img;
    }

    private static String escape(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }
}
