/** Bus in process memory (embedded default): a published message reaches this process's listeners at once. */
import type { Bus } from "../../ports.ts";

export class MemoryBus implements Bus {
  private channels = new Map<string, ((m: string) => void)[]>();

  async publish(channel: string, message: string) {
    for (const l of this.channels.get(channel) ?? []) l(message);
  }

  subscribe(channel: string, listener: (message: string) => void) {
    const ls = this.channels.get(channel) ?? [];
    ls.push(listener);
    this.channels.set(channel, ls);
  }
}
