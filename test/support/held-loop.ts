import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/** The inodes of this process's sockets, from its file descriptors. */
function ownSocketInodes(): Set<string> {
  const inodes = new Set<string>();
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      const inode = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/self/fd/${fd}`))?.[1];
      if (inode) inodes.add(inode);
    } catch {
      // A descriptor closed while the list was read.
    }
  }
  return inodes;
}

/** Bytes the kernel holds unread on this process's TCP connections to a port: an answer that came while the loop was held. */
export function bytesWaitingFrom(port: number): number {
  const inodes = ownSocketInodes();
  let waiting = 0;
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
      // sl local_address rem_address st tx_queue:rx_queue tr:when retrnsmt uid timeout inode
      const fields = line.trim().split(/\s+/);
      if (fields.length < 10) continue;
      const remotePort = parseInt(fields[2]!.split(':').pop()!, 16);
      if (remotePort === port && inodes.has(fields[9]!)) waiting += parseInt(fields[4]!.split(':')[1]!, 16);
    }
  }
  return waiting;
}

/**
 * Holds the event loop, as a burst of synchronous work does (many invocations answering at once, a
 * collection): at least `ms`, and then until an answer from `port` waits unread, so the answer
 * has come before the loop turns again however slow the machine. Gives up after a minute.
 */
export function holdTheLoop(ms: number, answerFrom: number): void {
  const start = performance.now();
  while (performance.now() - start < ms || bytesWaitingFrom(answerFrom) === 0) {
    if (performance.now() - start > 60_000) throw new Error(`no answer from port ${answerFrom} within a minute of holding the loop`);
  }
}
