'use strict';

/**
 * Greets people.
 */
class Greeter {
  #count = 0;
  static label = 'greeter';
  onClick = () => {
    this.#count += 1;
  };

  constructor(name) {
    this.name = name;
  }

  greet() {
    return `hello ${this.name}`;
  }

  get count() {
    return this.#count;
  }
}

function* ids() {
  yield 1;
}

const shout = (text) => text.toUpperCase();
let whisper = function (text) {
  return text.toLowerCase();
};
var legacy = function named() {};

function outer() {
  function inner() {}
  const helper = () => {
    return inner();
  };
  return helper;
}

Greeter.prototype.wave = function () {
  return 'wave';
};

module.exports.shout = shout;
exports.make = (name) => new Greeter(name);

(function () {
  function hiddenInIife() {}
})();

describe('greeter', () => {
  const fixture = () => new Greeter('x');
});
