import com.sun.tools.attach.VirtualMachine;

/**
 * Loads a JVMTI agent library into a running JVM with options, through the JDK's attach API: what
 * async-profiler's own launcher (asprof) does, which its Maven Central jar does not carry. bench/profile.sh
 * loads async-profiler with "start,..." after the warm-up and again with "stop,..." after the measured
 * window, so that neither the start nor the JIT's warm-up is in the profile.
 *
 * <pre>java bench/AttachAgent.java PID /path/to/libasyncProfiler.so start,event=cpu,interval=1ms</pre>
 */
public class AttachAgent {
    public static void main(String[] args) throws Exception {
        if (args.length != 3) {
            System.err.println("usage: java bench/AttachAgent.java PID AGENT-LIBRARY OPTIONS");
            System.exit(2);
        }
        VirtualMachine vm = VirtualMachine.attach(args[0]);
        try {
            // async-profiler answers a failed command with a non-zero status: AgentLoadException
            vm.loadAgentPath(args[1], args[2]);
        } finally {
            vm.detach();
        }
    }
}
