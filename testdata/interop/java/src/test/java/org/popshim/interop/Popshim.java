package org.popshim.interop;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One popshim broker process owned by a test class.
 *
 * <p>The binary comes from the system property {@code popshim.bin} (run.sh builds it). Ports are picked
 * free once and kept across {@link #restart}, so clients that cached the name-server and broker addresses
 * reconnect to the same place. Each process is started through {@code setsid}, so its pid is also its
 * process group id; its pid is written to {@code <popshim.workdir>/pids/} so that run.sh can kill it even
 * if this JVM dies without running shutdown hooks.
 */
final class Popshim implements AutoCloseable {
    private static final Duration READY_TIMEOUT = Duration.ofSeconds(30);
    private static final Duration STOP_TIMEOUT = Duration.ofSeconds(20);

    private final Path bin;
    private final Path dir;
    private final Path dataDir;
    private final Path pidDir;
    private final int brokerPort;
    private final int namesrvPort;
    private final int metricsPort;
    private final List<String> extraArgs;
    /** Readiness is probed over TLS (trusting any certificate) when popshim refuses plaintext (--tls-mode enforcing). */
    private final boolean tls;
    /** With --auth-enabled the unsigned readiness probe is answered NO_PERMISSION (16): that counts as up. */
    private final boolean authEnabled;
    private volatile Process process;
    private int starts;

    private Popshim(Path bin, Path dir, List<String> args) throws IOException {
        this.bin = bin;
        this.dir = dir;
        this.dataDir = dir.resolve("data");
        this.pidDir = Paths.get(System.getProperty("popshim.workdir", dir.getParent().toString())).resolve("pids");
        Files.createDirectories(dataDir);
        Files.createDirectories(pidDir);
        int[] ports = freePorts(3);
        this.brokerPort = ports[0];
        this.namesrvPort = ports[1];
        this.metricsPort = ports[2];
        String extra = System.getProperty("popshim.extraArgs", "").trim();
        List<String> all = new ArrayList<>(args);
        if (!extra.isEmpty()) {
            all.addAll(Arrays.asList(extra.split("\\s+")));
        }
        this.extraArgs = List.copyOf(all);
        int mode = all.indexOf("--tls-mode");
        this.tls = mode >= 0 && mode + 1 < all.size() && all.get(mode + 1).equals("enforcing");
        this.authEnabled = all.contains("--auth-enabled");
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            Process p = process;
            if (p != null) {
                p.destroyForcibly();
            }
        }));
    }

    /** Starts a fresh popshim with an empty data directory named after {@code name}. */
    static Popshim start(String name) throws Exception {
        return start(name, List.of());
    }

    /** As {@link #start(String)}, with {@code args} added to the {@code popshim serve} command line. */
    static Popshim start(String name, List<String> args) throws Exception {
        String binProp = System.getProperty("popshim.bin", "");
        if (binProp.isEmpty()) {
            throw new IllegalStateException("system property popshim.bin is not set: run testdata/interop/run.sh, "
                + "or pass -Dpopshim.bin=/path/to/popshim -Dpopshim.workdir=/tmp/dir to mvn");
        }
        Path bin = Paths.get(binProp).toAbsolutePath();
        if (!Files.isExecutable(bin)) {
            throw new IllegalStateException("popshim.bin=" + bin + " is not an executable file");
        }
        Path root = Paths.get(System.getProperty("popshim.workdir", System.getProperty("java.io.tmpdir")));
        Files.createDirectories(root);
        Path dir = Files.createTempDirectory(root, name + "-");
        Popshim p = new Popshim(bin, dir, args);
        p.launch();
        return p;
    }

    /** This popshim's own directory (logs, data), for files a test class puts beside it. */
    Path dir() {
        return dir;
    }

    /** Name-server address to give clients as namesrvAddr. */
    String namesrvAddr() {
        return "127.0.0.1:" + namesrvPort;
    }

    /** Broker address popshim should advertise in routes. */
    String brokerAddr() {
        return "127.0.0.1:" + brokerPort;
    }

    /** Graceful stop (SIGTERM, then SIGKILL after 20 s) followed by a start on the same ports and data. */
    void restart() throws Exception {
        stop();
        launch();
    }

    /** Crash (SIGKILL, no chance to flush) followed by a start on the same ports and data. */
    void crashAndRestart() throws Exception {
        kill();
        launch();
    }

    /**
     * The sum of every sample of the Prometheus series {@code name} (all label sets) on popshim's
     * /metrics endpoint; 0 when the series is absent.
     */
    double metric(String name) throws IOException, InterruptedException {
        java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();
        java.net.http.HttpResponse<String> r = http.send(java.net.http.HttpRequest.newBuilder(
                java.net.URI.create("http://127.0.0.1:" + metricsPort + "/metrics")).timeout(Duration.ofSeconds(10)).build(),
            java.net.http.HttpResponse.BodyHandlers.ofString());
        double sum = 0;
        for (String line : r.body().split("\n")) {
            if (line.startsWith(name + " ") || line.startsWith(name + "{")) {
                sum += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return sum;
    }

    /** Tail of the current log file, for failure messages. */
    String logTail() {
        Path log = logFile();
        try {
            List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
            // console logs carry ANSI colours even in a file; strip them for readable failure messages
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()))
                .replaceAll("\u001B\\[[0-9;]*m", "");
        } catch (IOException e) {
            return "(no log at " + log + ": " + e + ")";
        }
    }

    @Override
    public void close() {
        stop();
    }

    private Path logFile() {
        return dir.resolve("popshim-" + starts + ".log");
    }

    private void launch() throws Exception {
        starts++;
        List<String> cmd = new ArrayList<>();
        if (Files.isExecutable(Paths.get("/usr/bin/setsid"))) {
            cmd.add("/usr/bin/setsid");
        }
        cmd.addAll(List.of(bin.toString(), "serve",
            "--listen", brokerAddr(),
            "--broker-ip", "127.0.0.1",
            "--namesrv-listen", namesrvAddr(),
            "--metrics-listen", "127.0.0.1:" + metricsPort,
            "--grpc-listen=",
            "--data-dir", dataDir.toString(),
            "--log-format", "console"));
        cmd.addAll(extraArgs);
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile().toFile()));
        process = pb.start();
        Files.writeString(pidFile(), Long.toString(process.pid()));
        long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
        while (!(listening(brokerPort) && listening(namesrvPort) && routeReady(namesrvPort, tls, authEnabled))) {
            if (!process.isAlive()) {
                throw new IllegalStateException("popshim exited with code " + process.exitValue()
                    + " during start-up; command " + cmd + "\nlog:\n" + logTail());
            }
            if (System.nanoTime() > deadline) {
                stop();
                throw new IllegalStateException("popshim did not listen on " + brokerAddr() + " and "
                    + namesrvAddr() + ", with a SUCCESS route for TBW102 on the latter, within " + READY_TIMEOUT
                    + "\nlog:\n" + logTail());
            }
            Thread.sleep(50);
        }
    }

    private void stop() {
        if (process == null) {
            return;
        }
        process.destroy();
        try {
            if (!process.waitFor(STOP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly().waitFor();
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
        forget();
    }

    private void kill() throws InterruptedException {
        if (process == null) {
            return;
        }
        process.destroyForcibly().waitFor();
        forget();
    }

    private void forget() {
        try {
            Files.deleteIfExists(pidFile());
        } catch (IOException ignored) {
            // run.sh kills whatever pid is left; a stale file only names a dead process
        }
        process = null;
    }

    private Path pidFile() {
        return pidDir.resolve(dir.getFileName() + ".pid");
    }

    private static boolean listening(int port) {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", port), 200);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /**
     * True when the name server answers GET_ROUTEINFO_BY_TOPIC(105) for TBW102 with SUCCESS: the route
     * clients will ask for first is there. One JSON-serialized remoting frame, written by hand.
     */
    private static boolean routeReady(int port, boolean tls, boolean denyIsUp) {
        try (Socket s = tls ? TlsFiles.trustAllSocket() : new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", port), 200);
            s.setSoTimeout(2_000);
            byte[] header = ("{\"code\":105,\"extFields\":{\"topic\":\"TBW102\"},\"flag\":0,\"language\":\"JAVA\","
                + "\"opaque\":1,\"serializeTypeCurrentRPC\":\"JSON\",\"version\":479}").getBytes(StandardCharsets.UTF_8);
            DataOutputStream out = new DataOutputStream(s.getOutputStream());
            out.writeInt(4 + header.length);
            out.writeInt(header.length);
            out.write(header);
            out.flush();
            DataInputStream in = new DataInputStream(s.getInputStream());
            int total = in.readInt();
            int mark = in.readInt();
            byte[] h = new byte[mark & 0xFFFFFF];
            in.readFully(h);
            in.skipNBytes(total - 4 - h.length);
            int code = (mark >>> 24) == 1
                ? ((h[0] & 0xFF) << 8) | (h[1] & 0xFF)  // ROCKETMQ binary header: code is the first i16
                : com.alibaba.fastjson2.JSON.parseObject(new String(h, StandardCharsets.UTF_8)).getIntValue("code", -1);
            return code == 0 || (denyIsUp && code == 16);
        } catch (IOException | RuntimeException | java.security.GeneralSecurityException e) {
            return false;
        }
    }

    private static int[] freePorts(int n) throws IOException {
        int[] ports = new int[n];
        List<ServerSocket> held = new ArrayList<>();
        try {
            for (int i = 0; i < n; i++) {
                ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getByName("127.0.0.1"));
                held.add(s);
                ports[i] = s.getLocalPort();
            }
        } finally {
            for (ServerSocket s : held) {
                s.close();
            }
        }
        return ports;
    }
}
