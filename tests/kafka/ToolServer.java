// Runs Kafka's command-line tool classes one after another in one JVM, so the test suite pays
// for a JVM start once per session instead of once per tool call (two cores, ~1.5 s each).
//
// Protocol, on stdin/stdout, one line per call: space-separated base64 fields
//   request:  <stdin bytes> <main class> <arg> ...      (an empty field is written "-")
//   response: <exit status> <stdout bytes> <stderr bytes>
// A tool ends either by returning from main (status 0), by Kafka's Exit.exit (Kafka's tools
// all exit through it; 2.8 has it in org.apache.kafka.common.utils, 4.x in .internals), by
// System.exit (caught by a security manager), or by an uncaught exception (printed the way
// the JVM prints it, status 1). An exiting tool's thread is parked, never resumed: what a
// tool does after it asked to exit must not reach the output, as in a real JVM. The shutdown
// hooks a tool adds through Kafka's Exit.addShutdownHook (producers flushing, consumers
// leaving their group) run when that call ends, as the JVM would run them at exit.
import java.io.*;
import java.lang.reflect.*;
import java.nio.charset.StandardCharsets;
import java.util.*;
import java.util.concurrent.*;

public final class ToolServer {
    static final class Call {
        final CompletableFuture<Integer> status = new CompletableFuture<>();
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        final ByteArrayOutputStream err = new ByteArrayOutputStream();
        final List<Runnable> hooks = Collections.synchronizedList(new ArrayList<>());

        /** End the call: run its shutdown hooks (each bounded, as a hung hook would hang the
         *  JVM's exit), then report the status. Only the first end counts. */
        void end(int code) {
            synchronized (this) {
                if (status.isDone()) return;
                List<Runnable> toRun;
                synchronized (hooks) { toRun = new ArrayList<>(hooks); hooks.clear(); }
                List<Thread> threads = new ArrayList<>();
                for (Runnable hook : toRun) {
                    Thread t = new Thread(hook, "shutdown-hook");
                    t.setDaemon(true);
                    t.start();
                    threads.add(t);
                }
                for (Thread t : threads) {
                    try { t.join(10_000); } catch (InterruptedException ignored) { }
                }
                System.out.flush();
                System.err.flush();
                status.complete(code);
            }
        }
    }

    static final ThreadLocal<Call> CURRENT = new InheritableThreadLocal<>();
    static volatile Call active;
    static OutputStream idle;

    /** System.out and System.err: what a thread writes goes to the call it was started in
     *  (threads inherit CURRENT) while that call runs, and to the real stderr otherwise, so
     *  that a client a finished tool left behind cannot write into a later call's output. */
    static final class Routed extends OutputStream {
        final boolean toErr;

        Routed(boolean toErr) { this.toErr = toErr; }

        OutputStream target() {
            Call call = CURRENT.get();
            if (call != null && call == active) return toErr ? call.err : call.out;
            return idle;
        }

        @Override public void write(int b) throws IOException { target().write(b); }
        @Override public void write(byte[] b, int off, int len) throws IOException { target().write(b, off, len); }
        @Override public void flush() throws IOException { target().flush(); }
    }
    static volatile boolean serverExiting = false;

    static void exitTool(int code) {
        Call call = CURRENT.get();
        if (call == null) {
            if (serverExiting) return;
            throw new SecurityException("exit outside a tool call");
        }
        call.end(code);
        while (true) {  // park this thread for good: the JVM would be gone by now
            try { Thread.sleep(Long.MAX_VALUE); } catch (InterruptedException ignored) { }
        }
    }

    @SuppressWarnings("removal")
    static void guardSystemExit() {
        try {
            System.setSecurityManager(new SecurityManager() {
                @Override public void checkPermission(java.security.Permission perm) { }
                @Override public void checkPermission(java.security.Permission perm, Object ctx) { }
                @Override public void checkExit(int status) { exitTool(status); }
            });
        } catch (UnsupportedOperationException e) {
            // Java 18+ without -Djava.security.manager=allow: Kafka's tools use Exit anyway.
        }
    }

    static void hookKafkaExit() {
        for (String name : new String[]{"org.apache.kafka.common.utils.internals.Exit", "org.apache.kafka.common.utils.Exit"}) {
            try {
                Class<?> exit = Class.forName(name);
                Class<?> procedure = Class.forName(name + "$Procedure");
                Object proc = Proxy.newProxyInstance(procedure.getClassLoader(), new Class<?>[]{procedure},
                    (proxy, method, args) -> {
                        if (method.getDeclaringClass() == Object.class) return method.invoke(proxy, args);
                        exitTool((Integer) args[0]);
                        return null;
                    });
                exit.getMethod("setExitProcedure", procedure).invoke(null, proc);
                exit.getMethod("setHaltProcedure", procedure).invoke(null, proc);
                Class<?> adderType = Class.forName(name + "$ShutdownHookAdder");
                Object adder = Proxy.newProxyInstance(adderType.getClassLoader(), new Class<?>[]{adderType},
                    (proxy, method, args) -> {
                        if (method.getDeclaringClass() == Object.class) return method.invoke(proxy, args);
                        Call call = CURRENT.get();
                        if (call != null) call.hooks.add((Runnable) args[1]);
                        return null;
                    });
                exit.getMethod("setShutdownHookAdder", adderType).invoke(null, adder);
            } catch (ClassNotFoundException e) {
                // not this Kafka's package
            } catch (ReflectiveOperationException e) {
                throw new RuntimeException(e);
            }
        }
    }

    /** Scala's Console keeps its own streams (inherited by new threads from the thread that
     *  creates them), first taken from System.out/err/in: point them at this call's too, or
     *  the Scala tools of Kafka 2.8 would print into the first call's buffers. */
    static void redirectScalaConsole(PrintStream out, PrintStream err, InputStream in) {
        try {
            Object console = Class.forName("scala.Console$").getField("MODULE$").get(null);
            Class<?> c = console.getClass();
            c.getMethod("setOutDirect", PrintStream.class).invoke(console, out);
            c.getMethod("setErrDirect", PrintStream.class).invoke(console, err);
            c.getMethod("setInDirect", BufferedReader.class).invoke(console,
                new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8)));
        } catch (ClassNotFoundException e) {
            // no Scala on this classpath
        } catch (ReflectiveOperationException e) {
            throw new RuntimeException(e);
        }
    }

    static byte[] field(String s) {
        return s.equals("-") ? new byte[0] : Base64.getDecoder().decode(s);
    }

    static String encode(byte[] b) {
        return b.length == 0 ? "-" : Base64.getEncoder().encodeToString(b);
    }

    public static void main(String[] argv) throws Exception {
        // The protocol has stdout to itself.
        PrintStream protocol = new PrintStream(new FileOutputStream(FileDescriptor.out), false, StandardCharsets.US_ASCII);
        idle = new FileOutputStream(FileDescriptor.err);
        PrintStream routedOut = new PrintStream(new Routed(false), true, StandardCharsets.UTF_8);
        PrintStream routedErr = new PrintStream(new Routed(true), true, StandardCharsets.UTF_8);
        System.setOut(routedOut);
        System.setErr(routedErr);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.US_ASCII));
        hookKafkaExit();
        guardSystemExit();
        String line;
        while ((line = in.readLine()) != null) {
            String[] parts = line.split(" ", -1);
            byte[] stdin = field(parts[0]);
            String cls = new String(field(parts[1]), StandardCharsets.UTF_8);
            String[] args = new String[parts.length - 2];
            for (int i = 2; i < parts.length; i++) args[i - 2] = new String(field(parts[i]), StandardCharsets.UTF_8);

            InputStream toolIn = new ByteArrayInputStream(stdin);
            System.setIn(toolIn);
            redirectScalaConsole(routedOut, routedErr, toolIn);
            Call call = new Call();
            active = call;
            Thread tool = new Thread(() -> {
                CURRENT.set(call);
                try {
                    Method main = Class.forName(cls).getMethod("main", String[].class);
                    main.invoke(null, (Object) args);
                    call.end(0);
                } catch (InvocationTargetException e) {
                    System.err.print("Exception in thread \"main\" ");
                    e.getCause().printStackTrace();
                    call.end(1);
                } catch (ClassNotFoundException | NoSuchMethodException e) {
                    System.err.println("Error: Could not find or load main class " + cls);
                    call.end(1);
                } catch (Throwable t) {
                    t.printStackTrace();
                    call.end(1);
                }
            }, "main");
            tool.setDaemon(true);
            tool.start();
            int status = call.status.get();
            active = null;
            protocol.println(status + " " + encode(call.out.toByteArray()) + " " + encode(call.err.toByteArray()));
            protocol.flush();
        }
        serverExiting = true;
        Runtime.getRuntime().halt(0);
    }
}
