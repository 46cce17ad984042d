// A minimal Neo4j 5.26 server for the test suite: embedded DBMS with Bolt on 127.0.0.1, no HTTP, no auth.
// Run without compiling (Java 11+ single-file source launch):
//   java --add-opens=... -cp "lib/*" Neo4jServer.java <homeDir> [boltPort]
// Prints "NEO4J READY" once Bolt is listening; runs until killed and shuts the DBMS down on SIGTERM.
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;

public class Neo4jServer {
    public static void main(String[] args) throws Exception {
        if (args.length < 1) {
            System.err.println("usage: Neo4jServer.java <homeDir> [boltPort]");
            System.exit(2);
        }
        Path home = Path.of(args[0]).toAbsolutePath();
        String port = args.length > 1 ? args[1] : "7687";
        long t0 = System.nanoTime();

        // Raw setting names (as in neo4j.conf) keep this file free of version-specific setting classes.
        DatabaseManagementService dbms = new DatabaseManagementServiceBuilder(home)
                .setConfigRaw(Map.of(
                        "server.bolt.enabled", "true",
                        "server.bolt.listen_address", "127.0.0.1:" + port,
                        "server.bolt.advertised_address", "127.0.0.1:" + port,
                        "server.http.enabled", "false",
                        "server.https.enabled", "false",
                        "dbms.security.auth_enabled", "false",
                        // Small, fixed memory: the machine has 2 cores and other servers run beside us.
                        "server.memory.pagecache.size", "128m",
                        "dbms.usage_report.enabled", "false"))
                .build();

        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            System.out.println("NEO4J STOPPING");
            try {
                dbms.shutdown();
            } finally {
                System.out.println("NEO4J STOPPED");
                System.out.flush();
                stopped.countDown();
            }
        }, "neo4j-shutdown"));

        // build() returns once the default databases are started and Bolt is bound.
        dbms.database("neo4j").executeTransactionally("RETURN 1");
        System.out.printf("NEO4J READY bolt://127.0.0.1:%s (%d ms)%n", port, (System.nanoTime() - t0) / 1_000_000);
        System.out.flush();
        stopped.await();
    }
}
