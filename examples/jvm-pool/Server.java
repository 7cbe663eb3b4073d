// An agent server on a fixed pool of 4 worker threads, each blocking on its LLM call: the
// JDK's own HTTP server (com.sun.net.httpserver) with Executors.newFixedThreadPool(4) and
// java.net.http.HttpClient.send, the conversation kept per session. At most 4 turns run at
// once, whatever the sessions: throughput flat at 4 / turn time with the CPU nearly idle.
// Its threads are named by the JDK (pool-1-thread-1 … -4), so Plimsoll can say which.
// Run: java Server.java (Java 11 or later runs a single source file).
import com.sun.net.httpserver.HttpServer;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

public class Server {
    static final HttpClient CLIENT = HttpClient.newHttpClient();
    static final Map<String, List<String>> CONVERSATIONS = new ConcurrentHashMap<>();
    static final Pattern FIELD = Pattern.compile("\"(session|message)\"\\s*:\\s*\"((?:[^\"\\\\]|\\\\.)*)\"");
    static final Pattern CONTENT = Pattern.compile("\"content\"\\s*:\\s*\"((?:[^\"\\\\]|\\\\.)*)\"");

    public static void main(String[] args) throws Exception {
        String base = System.getenv().getOrDefault("OPENAI_BASE_URL", "http://127.0.0.1:8700/v1");
        int port = Integer.parseInt(System.getenv("PORT"));
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", port), 256);
        server.createContext("/health", ex -> reply(ex, 200, "{\"ok\":true}"));
        server.createContext("/turn", ex -> {
            try {
                String body = new String(ex.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
                String session = "", message = "";
                Matcher m = FIELD.matcher(body);
                while (m.find()) {
                    if (m.group(1).equals("session")) session = m.group(2); else message = m.group(2);
                }
                List<String> history = CONVERSATIONS.computeIfAbsent(session, k -> new ArrayList<>());
                String answer;
                synchronized (history) {
                    history.add("{\"role\":\"user\",\"content\":\"" + message + "\"}");
                    String ask = "{\"model\":\"gpt-4o-mini\",\"messages\":[" + String.join(",", history) + "]}";
                    HttpRequest req = HttpRequest.newBuilder(URI.create(base + "/chat/completions"))
                        .header("content-type", "application/json")
                        .header("authorization", "Bearer " + System.getenv().getOrDefault("OPENAI_API_KEY", "x"))
                        .POST(HttpRequest.BodyPublishers.ofString(ask)).build();
                    String got = CLIENT.send(req, HttpResponse.BodyHandlers.ofString()).body();
                    Matcher c = CONTENT.matcher(got);
                    answer = c.find() ? c.group(1) : "";
                    history.add("{\"role\":\"assistant\",\"content\":\"" + answer + "\"}");
                }
                reply(ex, 200, "{\"reply\":\"" + answer + "\"}");
            } catch (Exception e) {
                reply(ex, 500, "{\"error\":\"" + e.getClass().getSimpleName() + "\"}");
            }
        });
        server.setExecutor(Executors.newFixedThreadPool(4));
        server.start();
    }

    static void reply(com.sun.net.httpserver.HttpExchange ex, int status, String body) throws java.io.IOException {
        byte[] b = body.getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().add("content-type", "application/json");
        ex.sendResponseHeaders(status, b.length);
        try (OutputStream o = ex.getResponseBody()) {
            o.write(b);
        }
    }
}
