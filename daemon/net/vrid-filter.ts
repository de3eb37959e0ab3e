// The kernel-side filter of a VRRP socket: only adverts of its own VRID wake it. Every raw protocol-112
// socket on an interface receives every VRRP packet there, so with 255 VRIDs on one link each advert was
// copied to 255 sockets and judged 255 times in JavaScript, to be dropped 254 times as another router's
// (issue 15: 2.7 ms of CPU per advert). A classic BPF program per socket drops those in the kernel.
//
// Where the VRID is: the byte after version/type, in VRRP v2 and v3 alike. An IPv4 raw socket sees the IP
// header first (its length from IHL: options included); an IPv6 raw socket sees the VRRP message itself.
// A packet too short to hold the byte is dropped by the kernel too (a load past the end ends the program
// with 0); the runtime would have dropped it anyway.

// <linux/filter.h>, <linux/bpf_common.h>
const BPF_LD = 0x00;
const BPF_LDX = 0x01;
const BPF_JMP = 0x05;
const BPF_RET = 0x06;
const BPF_B = 0x10;
const BPF_IND = 0x40;
const BPF_MSH = 0xa0;
const BPF_ABS = 0x20;
const BPF_JEQ = 0x10;
const BPF_K = 0x00;

/** The whole packet, as far as a socket takes one (what BPF_RET means by "accept"). */
const ACCEPT = 0xffff_ffff;

export interface BpfInstruction {
  code: number;
  jt: number;
  jf: number;
  k: number;
}

export function vridProgram(family: 4 | 6, vrid: number): BpfInstruction[] {
  if (!Number.isInteger(vrid) || vrid < 1 || vrid > 255) throw new RangeError(`VRID ${String(vrid)} is not 1..255`);
  const load: BpfInstruction[] = family === 4
    ? [
        { code: BPF_LDX | BPF_B | BPF_MSH, jt: 0, jf: 0, k: 0 }, // x = 4 * (ip[0] & 0xf): the IPv4 header's length
        { code: BPF_LD | BPF_B | BPF_IND, jt: 0, jf: 0, k: 1 }, // a = packet[x + 1]
      ]
    : [{ code: BPF_LD | BPF_B | BPF_ABS, jt: 0, jf: 0, k: 1 }]; // a = packet[1]
  return [
    ...load,
    { code: BPF_JMP | BPF_JEQ | BPF_K, jt: 0, jf: 1, k: vrid },
    { code: BPF_RET | BPF_K, jt: 0, jf: 0, k: ACCEPT },
    { code: BPF_RET | BPF_K, jt: 0, jf: 0, k: 0 },
  ];
}

/** struct sock_filter[] as the kernel reads it: u16 code, u8 jt, u8 jf, u32 k, in host (little-endian) order. */
export function encodeProgram(program: readonly BpfInstruction[]): Buffer {
  const b = Buffer.alloc(program.length * 8);
  program.forEach((ins, i) => {
    b.writeUInt16LE(ins.code, i * 8);
    b.writeUInt8(ins.jt, i * 8 + 2);
    b.writeUInt8(ins.jf, i * 8 + 3);
    b.writeUInt32LE(ins.k >>> 0, i * 8 + 4);
  });
  return b;
}
