import java.util.Properties;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListTopicsOptions;

/**
 * Readiness probe for scripts/kafka/broker.sh: exits 0 once the broker at args[0] answers a DescribeCluster and
 * a Metadata (list topics) request through the public Admin API of kafka-clients, 1 if it does not within
 * args[1] seconds. Compiled once by broker.sh with javac against the broker's own jars, so it needs no Node
 * modules and no Kafka command-line tool (those move between Kafka releases).
 */
public final class Ready {
  public static void main(String[] args) throws InterruptedException {
    String bootstrap = args.length > 0 ? args[0] : "127.0.0.1:9092";
    long timeoutMs = TimeUnit.SECONDS.toMillis(args.length > 1 ? Long.parseLong(args[1]) : 30);
    long deadline = System.currentTimeMillis() + timeoutMs;
    Properties props = new Properties();
    props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    props.put(AdminClientConfig.CLIENT_ID_CONFIG, "a2a-broker-ready");
    props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "3000");
    props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "5000");
    props.put(AdminClientConfig.RETRY_BACKOFF_MS_CONFIG, "200");
    String last = "no attempt";
    try (Admin admin = Admin.create(props)) {
      while (System.currentTimeMillis() < deadline) {
        try {
          int nodes = admin.describeCluster().nodes().get(5, TimeUnit.SECONDS).size();
          Set<String> topics =
              admin.listTopics(new ListTopicsOptions().listInternal(true)).names().get(5, TimeUnit.SECONDS);
          if (nodes > 0) {
            System.out.println("ready: " + nodes + " node(s), " + topics.size() + " topic(s)");
            return;
          }
          last = "no broker registered yet";
        } catch (Exception e) {
          last = e.getCause() != null ? e.getCause().toString() : e.toString();
        }
        Thread.sleep(500);
      }
    }
    System.err.println("not ready after " + timeoutMs + " ms: " + last);
    System.exit(1);
  }
}
