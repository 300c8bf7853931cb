#!/usr/bin/env python3
"""The service's CPU shares by layer, from async-profiler's collapsed stacks (bench/profile.sh writes them).

    python3 bench/shares.py target/profile/replays.collapsed [more.collapsed ...] [--other N]

Each line of a collapsed file is one stack, root frame first, frames separated by ';', then its sample
count. With async-profiler's `threads` option the root frame is the thread's name, in brackets.

The rule: every stack goes to exactly one layer, decided in three passes, the first that finds one wins.

1. WHOLE_STACK: a frame anywhere in the stack (the thread's name included) marks the thread's kind: the
   collector's and the JIT compiler's threads do nothing else.
2. LAYERS, innermost frame first: from the leaf towards the root, the first frame that matches a pattern
   of LAYERS decides; where one frame matches several layers, the earlier in the list wins. So a frame's
   own work and that of everything it calls that no layer names (the JDK, Mutiny, Jackson, Netty's
   channel plumbing, the JVM's allocation and stub frames) go to the nearest named frame around it:
   Jackson under dev.ledger.input is body parsing, under RequestFingerprint the fingerprint, under Quarkus
   REST's writer the answer; SHA-256 under RequestFingerprint is the fingerprint, under
   dev.ledger.security authentication. A system call is kernel I/O whatever made it (the Redis client's
   write, the answer's), so I/O is counted once, apart from the layers' own work. Innermost, not
   outermost, because Vert.x Web nests each route handler inside the one before (next() calls the next
   handler): the authentication handler is around the service's whole POST, and counts only what it does
   itself. Frames of TRANSPARENT never decide: they are shared plumbing whose work belongs to their caller
   (the service's turn batching serves the Redis pipeline and the account reads; Quarkus REST's path
   mapper serves REST's routing and the HTTP metrics' path template).
3. FALLBACK, innermost first, TRANSPARENT frames included: where nothing of LAYERS is in the stack, the
   service's own code (the turn batching's flush, run by the event loop), then the event loop's own
   frames (Netty, Vert.x); then "other" (the JVM's own threads, the interpreter, anything unnamed).

Patterns are substrings of a frame (async-profiler writes Java frames as package/Class.method with
dots or slashes, native ones by their symbol; kernel frames end in _[k]). Frames are compared with '/'
turned into '.', so a pattern is written with dots.
"""
import sys
from collections import Counter

GC = "GC (collections, allocation slow paths, barriers)"

SERVICE = "the service's own code, other (engine, routes, outcomes)"
TRANSPARENT = ["dev.ledger.dependency.TurnBatcher", "org.jboss.resteasy.reactive.server.mapping."]

WHOLE_STACK = [
    # the serial collector collects in the VM thread, on a VM operation; G1 and Parallel in GC threads
    (GC, ["[GC Thread", "[G1 ", "GCTaskThread", "ConcurrentGCThread", "GangWorker", "VM_GenCollect",
          "VM_G1", "VM_ParallelGC", "VM_CollectForAllocation", "GenCollectedHeap::", "SerialHeap::",
          "DefNewGeneration::", "TenuredGeneration::", "ParallelScavengeHeap::", "G1CollectedHeap::"]),
    ("JIT compiler", ["[C1 CompilerThread", "[C2 CompilerThread", "CompileBroker::", "[Sweeper thread"]),
]

LAYERS = [
    ("kernel (system calls: network I/O, epoll, futex)", [
        "_[k]", "epoll_wait", "epoll_pwait", "epoll_ctl", "Native.epollWait", "Native.epollBusyWait",
        "writev", "__libc_write", "__write", "__libc_read", "__read", "__send", "__recv", "sendto",
        "recvfrom", "__libc_sendmsg", "__libc_recvmsg", "eventfd_write", "eventfd_read",
        "io.netty.channel.unix.FileDescriptor.", "io.netty.channel.unix.Socket.",
        "io.netty.channel.epoll.LinuxSocket.", "io.netty.channel.epoll.Native.", "syscall", "futex"]),
    (GC, ["G1BarrierSetRuntime", "MemAllocator::allocate_inside_tlab_slow", "CollectedHeap::"]),
    ("tracing (OpenTelemetry, the outcome's trail)", [
        "io.opentelemetry.", "io.quarkus.opentelemetry.", "dev.ledger.tracing.", "dev.ledger.idempotency.OutcomeTrail"]),
    ("metrics (Micrometer)", [
        "io.micrometer.", "io.quarkus.micrometer.", "dev.ledger.idempotency.OutcomeMetrics",
        "io.quarkus.resteasy.reactive.server.runtime.observability.",
        "dev.ledger.dependency.DependencyTimer", "dev.ledger.commands.CommandMetrics",
        "io.github.resilience4j.micrometer."]),
    ("authentication", [
        "dev.ledger.security.", "dev.ledger.http.Caller", "io.quarkus.vertx.http.runtime.security.",
        "io.quarkus.security.", "io.quarkus.vertx.http.security."]),
    ("fingerprint", ["dev.ledger.idempotency.RequestFingerprint"]),
    ("key, headers and body parsing", [
        "dev.ledger.input.", "dev.ledger.idempotency.IdempotencyKey", "dev.ledger.http.IdempotentPosts.requireJson",
        "dev.ledger.http.PreferWait", "dev.ledger.http.RequestLimits", "dev.ledger.http.DeclaredBodyLimit",
        "dev.ledger.http.EarlyRefusal",
        "dev.ledger.http.AcceptableResponses", "dev.ledger.http.QueryParams",
        "dev.ledger.transaction.PostTransactionRequest", "dev.ledger.account.OpenAccountRequest",
        "io.vertx.ext.web.handler.impl.BodyHandlerImpl", "io.quarkus.vertx.http.runtime.VertxHttpRecorder$BodyHandler",
        "org.jboss.resteasy.reactive.server.handlers.RequestDeserializeHandler",
        "org.jboss.resteasy.reactive.server.handlers.ParameterHandler"]),
    ("Redis call", ["dev.ledger.redis.", "io.vertx.redis.", "io.vertx.mutiny.redis.", "io.quarkus.redis.",
                    "dev.ledger.fastpath."]),
    ("Postgres call", [
        "io.vertx.pgclient.", "io.vertx.sqlclient.", "io.vertx.mutiny.sqlclient.", "io.vertx.mutiny.pgclient.",
        "org.hibernate.", "io.quarkus.hibernate.", "io.quarkus.reactive.datasource.", "io.quarkus.reactive.pg.",
        "dev.ledger.dependency.Postgres", "dev.ledger.transaction.TransactionRepository",
        "dev.ledger.account.AccountReads", "dev.ledger.account.AccountRepository"]),
    ("breakers and deadlines", ["dev.ledger.dependency.Breakers", "dev.ledger.dependency.Deadline",
                                "io.github.resilience4j."]),
    ("writing the answer", [
        "dev.ledger.http.IdempotentPosts.send", "dev.ledger.problem.ProblemMapper.send",
        "dev.ledger.idempotency.ResponseRecorder",
        "io.vertx.core.http.impl.Http1xServerResponse", "io.netty.handler.codec.http.HttpObjectEncoder",
        "io.netty.handler.codec.http.HttpResponseEncoder", "io.netty.handler.codec.MessageToMessageEncoder",
        "io.vertx.core.http.impl.Http1xServerConnection.write", "io.vertx.core.net.impl.ConnectionBase.write",
        "io.vertx.core.net.impl.ConnectionBase.flush", "io.vertx.core.net.impl.ConnectionBase.endReadAndFlush",
        "org.jboss.resteasy.reactive.server.core.serialization.", "org.jboss.resteasy.reactive.server.core.ServerSerialisers",
        "org.jboss.resteasy.reactive.server.handlers.ResponseWriterHandler",
        "org.jboss.resteasy.reactive.server.vertx.VertxResteasyReactiveRequestContext.end",
        "io.quarkus.resteasy.reactive.jackson.runtime.serialisers.", "org.jboss.resteasy.reactive.server.jackson."]),
    ("Quarkus REST (resource machinery)", ["org.jboss.resteasy.reactive.", "io.quarkus.resteasy.reactive.",
                                           "io.quarkus.rest."]),
    (SERVICE, ["dev.ledger."]),
    ("Netty/Vert.x HTTP parsing and routing", [
        "io.netty.handler.codec.http.", "io.vertx.core.http.", "io.vertx.ext.web.", "io.quarkus.vertx.http.",
        "io.netty.handler.codec.ByteToMessageDecoder", "io.quarkus.vertx.web."]),
]

FALLBACK = [
    (SERVICE, ["dev.ledger."]),
    ("Netty/Vert.x event loop", ["io.netty.", "io.vertx.", "io.quarkus.vertx.", "io.smallrye.mutiny."]),
]

OTHER = "other (JVM threads, interpreter, unnamed)"


def frames_of(line):
    stack, _, count = line.rstrip("\n").rpartition(" ")
    return [f.replace("/", ".") for f in stack.split(";")], int(count)


def first_match(frames, rules):
    for frame in frames:
        for layer, patterns in rules:
            if any(p in frame for p in patterns):
                return layer, frame
    return None, None


def classify(frames):
    """The layer of one stack (root first), and the frame that decided it."""
    layer, frame = first_match(frames, WHOLE_STACK)
    if layer:
        return layer, frame
    inner = list(reversed(frames))
    layer, frame = first_match([f for f in inner if not any(p in f for p in TRANSPARENT)], LAYERS)
    if layer:
        return layer, frame
    layer, frame = first_match(inner, FALLBACK)
    if layer:
        return layer, frame
    return OTHER, frames[-1] if frames else ""


def main(argv):
    other_n = 0
    files = []
    args = iter(argv)
    for a in args:
        if a == "--other":
            other_n = int(next(args))
        else:
            files.append(a)
    if not files:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    shares, other_leaves = Counter(), Counter()
    total = 0
    for path in files:
        with open(path) as f:
            for line in f:
                if not line.strip():
                    continue
                frames, count = frames_of(line)
                layer, _ = classify(frames)
                shares[layer] += count
                total += count
                if layer == OTHER:
                    other_leaves[frames[-1]] += count
    if total == 0:
        print("no samples in " + ", ".join(files))
        return 1
    order = [name for name, _ in WHOLE_STACK + LAYERS + FALLBACK] + [OTHER]
    seen = []
    for name in order:
        if name not in seen:
            seen.append(name)
    width = max(len(n) for n in seen)
    print(f"{'layer':<{width}}  {'samples':>8}  {'share':>6}")
    for name in sorted(seen, key=lambda n: -shares[n]):
        if shares[name]:
            print(f"{name:<{width}}  {shares[name]:>8}  {100.0 * shares[name] / total:>5.1f}%")
    print(f"{'total':<{width}}  {total:>8}  100.0%")
    if other_n:
        print(f"\nheaviest leaf frames of '{OTHER}':")
        for frame, count in other_leaves.most_common(other_n):
            print(f"{count:>8}  {frame}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
