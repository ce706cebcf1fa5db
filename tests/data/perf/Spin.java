public class Spin {
    static long work(int n) { long s = 0; for (int i = 0; i < n; i++) s += (i * 31L) % 7; return s; }
    static String text(int n) { StringBuilder b = new StringBuilder(); for (int i = 0; i < n; i++) b.append(i % 10); return b.toString(); }
    public static void main(String[] a) { long t = 0; for (int r = 0; r < 400; r++) { t += work(200000); t += text(20000).length(); } System.out.println(t); }
}
