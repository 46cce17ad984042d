// A minimal Neo4j 5.26 server for the test suite: embedded DBMS with Bolt on 127.0.0.1, no HTTP, no auth.
// Started by scripts/infra/lib/neo4j.sh (which compiles it once); by hand it also runs as a single file:
//   java --add-opens=... -cp "lib/*" Neo4jServer.java <homeDir> [boltPort]
// Prints "NEO4J READY" once Bolt is listening; runs until killed and shuts the DBMS down on SIGTERM.
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import org.neo4j.configuration.GraphDatabaseInternalSettings;
import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.connectors.BoltConnectorInternalSettings;
import org.neo4j.configuration.connectors.HttpConnector;
import org.neo4j.configuration.connectors.HttpsConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;

public class Neo4jServer {
    public static void main(String[] args) throws Exception {
        if (args.length < 1) {
            System.err.println("usage: Neo4jServer.java <homeDir> [boltPort]");
            System.exit(2);
        }
        Path home = Path.of(args[0]).toAbsolutePath();
        int port = args.length > 1 ? Integer.parseInt(args[1]) : 7687;
        long t0 = System.nanoTime();

        var bolt = new SocketAddress("127.0.0.1", port);
        DatabaseManagementService dbms = new DatabaseManagementServiceBuilder(home)
                .setConfig(BoltConnector.enabled, true)
                .setConfig(BoltConnector.listen_address, bolt)
                .setConfig(BoltConnector.advertised_address, bolt)
                .setConfig(HttpConnector.enabled, false)
                .setConfig(HttpsConnector.enabled, false)
                .setConfig(GraphDatabaseSettings.auth_enabled, false)
                // Small, fixed memory and disk: the machine has 2 cores and other servers run beside us.
                .setConfig(GraphDatabaseSettings.pagecache_memory, 128L * 1024 * 1024)
                .setConfig(GraphDatabaseSettings.preallocate_logical_logs, false)
                .setConfig(GraphDatabaseSettings.udc_enabled, false) // no usage reports (no network anyway)
                // Bolt waits 5 s for idle connections and 5 s of Netty quiet period on shutdown (internal
                // settings): the databases are checkpointed before that, so let it stop within a second.
                .setConfig(BoltConnectorInternalSettings.connection_shutdown_wait_time, Duration.ofMillis(500))
                .setConfig(GraphDatabaseInternalSettings.netty_server_shutdown_quiet_period, 0)
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
        System.out.printf("NEO4J READY bolt://127.0.0.1:%d (%d ms)%n", port, (System.nanoTime() - t0) / 1_000_000);
        System.out.flush();
        stopped.await();
    }
}
