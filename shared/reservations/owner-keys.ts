import type { OwnerKeys } from './kind';

/**
 * The keys of one owner (or bucket) under its hash tag. A class, not an object of closures: the
 * reserving path makes a set per request and the writer several per record, and each closure was
 * an allocation (and, under tsx, a call naming it) every time.
 */
export class TaggedKeys implements OwnerKeys {
  readonly state: string;
  readonly buyers: string;
  readonly outbox: string;
  readonly moves: string;

  constructor(
    readonly tag: string,
    names: { state: string; buyers: string },
  ) {
    this.state = `${tag}:${names.state}`;
    this.buyers = `${tag}:${names.buyers}`;
    this.outbox = `${tag}:outbox`;
    this.moves = `${tag}:moves`;
  }

  movedIn(moveId: string): string {
    return `${this.tag}:moved-in:${moveId}`;
  }

  /** Marks a reservation given back, so giving it back again does nothing. */
  released(id: string): string {
    return `${this.tag}:released:${id}`;
  }
}
