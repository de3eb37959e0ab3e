// The VRRP socket's kernel filter (net/vrid-filter.ts), run here by a small interpreter of the classic BPF
// instructions it uses, with the kernel's rule for a load past the end (the program returns 0: dropped).
// The real kernel runs it in test/netns (every VRRP test: an advert of the socket's own VRID must still
// arrive, IPv4 with options and IPv6 alike; vrrp-wire-fuzz: other VRIDs no longer reach the runtime).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { encodeProgram, vridProgram, type BpfInstruction } from '../../daemon/net/vrid-filter.js';

function run(program: readonly BpfInstruction[], p: Uint8Array): number {
  let a = 0;
  let x = 0;
  for (let pc = 0; pc < program.length; pc++) {
    const ins = program[pc] ?? assert.fail('ran off the program');
    const byte = (at: number): number | undefined => (at < p.length ? p[at] : undefined);
    switch (ins.code) {
      case 0xb1: { // ldxb 4*([k]&0xf)
        const b = byte(ins.k);
        if (b === undefined) return 0;
        x = 4 * (b & 0xf);
        break;
      }
      case 0x50: { // ldb [x+k]
        const b = byte(x + ins.k);
        if (b === undefined) return 0;
        a = b;
        break;
      }
      case 0x30: { // ldb [k]
        const b = byte(ins.k);
        if (b === undefined) return 0;
        a = b;
        break;
      }
      case 0x15: // jeq #k
        pc += a === ins.k ? ins.jt : ins.jf;
        break;
      case 0x06: // ret #k
        return ins.k;
      default:
        assert.fail(`opcode 0x${ins.code.toString(16)} not modelled`);
    }
  }
  return assert.fail('the program did not return');
}

test('IPv4: the VRID after an IP header of any length (options included) is what decides; a short packet is dropped', () => {
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 255 }), fc.integer({ min: 5, max: 15 }), fc.uint8Array({ minLength: 0, maxLength: 80 }), fc.integer({ min: 0, max: 255 }), fc.boolean(), (vrid, ihl, rest, theirs, same) => {
      const packet = new Uint8Array(ihl * 4 + 2 + rest.length);
      packet[0] = 0x40 | ihl;
      packet[ihl * 4] = 0x31; // v3 advertisement
      packet[ihl * 4 + 1] = same ? vrid : theirs;
      packet.set(rest, ihl * 4 + 2);
      const accepted = run(vridProgram(4, vrid), packet) !== 0;
      assert.equal(accepted, packet[ihl * 4 + 1] === vrid);
      assert.equal(run(vridProgram(4, vrid), packet.subarray(0, ihl * 4 + 1)), 0, 'cut before the VRID');
    }),
    { numRuns: 2000, seed: 15 },
  );
});

test('IPv6: the socket sees the VRRP message itself, so the VRID is its second byte', () => {
  for (const vrid of [1, 52, 255]) {
    assert.notEqual(run(vridProgram(6, vrid), Uint8Array.from([0x31, vrid, 100, 1])), 0);
    assert.equal(run(vridProgram(6, vrid), Uint8Array.from([0x31, vrid === 255 ? 1 : vrid + 1, 100, 1])), 0);
    assert.equal(run(vridProgram(6, vrid), Uint8Array.from([0x31])), 0);
  }
});

test('the program as the kernel reads it: 8 bytes per instruction, little-endian; a VRID outside 1..255 is refused', () => {
  const b = encodeProgram(vridProgram(4, 51));
  assert.equal(b.length, 5 * 8);
  assert.deepEqual([...b.subarray(0, 8)], [0xb1, 0, 0, 0, 0, 0, 0, 0]);
  assert.deepEqual([...b.subarray(16, 24)], [0x15, 0, 0, 1, 51, 0, 0, 0]);
  assert.deepEqual([...b.subarray(24, 32)], [0x06, 0, 0, 0, 0xff, 0xff, 0xff, 0xff]);
  assert.throws(() => vridProgram(4, 0), /VRID 0/);
  assert.throws(() => vridProgram(6, 256), /VRID 256/);
});
