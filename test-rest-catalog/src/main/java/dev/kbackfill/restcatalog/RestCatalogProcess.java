package dev.kbackfill.restcatalog;

import java.io.InputStream;
import java.util.HashMap;
import java.util.Map;

import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.jdbc.JdbcCatalog;
import org.apache.iceberg.rest.RESTCatalogAdapter;
import org.apache.iceberg.rest.RESTCatalogServlet;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

/**
 * An Iceberg REST catalog on 127.0.0.1, an ephemeral port: Iceberg's own REST servlet and adapter over a JDBC catalog
 * (SQLite). Arguments: the SQLite file, the warehouse (a directory or {@code s3a://BUCKET/PATH}), then Hadoop settings
 * as {@code KEY=VALUE} (S3A's endpoint and credentials). Prints {@code READY <port>} once it serves; stops when its
 * standard input closes (its parent ended).
 */
public final class RestCatalogProcess {

    private RestCatalogProcess() {
    }

    public static void main(String[] args) throws Exception {
        Configuration conf = new Configuration();
        for (int i = 2; i < args.length; i++) {
            String[] kv = args[i].split("=", 2);
            conf.set(kv[0], kv[1]);
        }
        Map<String, String> properties = new HashMap<>();
        properties.put("uri", "jdbc:sqlite:" + args[0]);
        properties.put("warehouse", args[1]);
        properties.put("jdbc.schema-version", "V1");
        JdbcCatalog backend = new JdbcCatalog();
        backend.setConf(conf);
        backend.initialize("rest_backend", properties);
        Server server = new Server();
        ServerConnector connector = new ServerConnector(server);
        connector.setHost("127.0.0.1");
        connector.setPort(0);
        server.addConnector(connector);
        ServletContextHandler context = new ServletContextHandler();
        context.setContextPath("/");
        context.addServlet(new ServletHolder(new RESTCatalogServlet(new RESTCatalogAdapter(backend))), "/*");
        server.setHandler(context);
        server.start();
        System.out.println("READY " + connector.getLocalPort());
        System.out.flush();
        InputStream in = System.in;
        while (in.read() >= 0) {
            // until the parent closes our stdin or dies
        }
        server.stop();
        backend.close();
        System.exit(0);
    }
}
