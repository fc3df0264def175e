import { EventEmitter } from 'events';

/** The shape of an item. */
export interface Item {
  id: number;
  label(): string;
}

export type Id = string | number;

type Handlers = {
  onAdd(item: Item): void;
};

export enum Status {
  Active,
  Done,
}

@injectable()
export class Store<T extends Item> extends EventEmitter {
  private items: T[] = [];
  readonly onChange = (item: T): void => {
    this.emit('change', item);
  };

  constructor(private readonly name: string) {
    super();
  }

  add(item: T): void;
  add(item: T, quiet: boolean): void;
  add(item: T, quiet = false): void {
    this.items.push(item);
  }
}

export abstract class Base {
  abstract load(): Promise<void>;
}

export function createStore<T extends Item>(name: string): Store<T> {
  return new Store<T>(name);
}

export const byId = async (id: Id): Promise<Item | undefined> => undefined;

declare function external(x: number): void;

namespace Utils.Strings {
  export function trim(s: string): string {
    return s.trim();
  }
}

declare module 'plugin' {
  export function register(): void;
}
