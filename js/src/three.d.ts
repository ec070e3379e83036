// fourdgs/three (src/three.js): a .4dgs scene as a Spark SplatMesh for three.js.
import type { PackedSplats, SplatMesh } from '@sparkjsdev/spark';
import type { FrameView, Input } from './fourdgs.js';
import { AdapterOptions, EngineScene } from './adapter.js';

export { EngineRows, FrameInfo } from './adapter.js';

export interface SplatMeshOptions extends AdapterOptions {
  /** SH bands shown (default 3). */
  maxShDegree?: number;
  /** The packing module (dist/fourdgs-spark-pack.wasm): its bytes or URL, default beside the
   * package's sources. */
  sparkPackWasm?: BufferSource | URL | string;
}

/** The packing module's exports (loadSparkPack). */
export type SparkPackWasm = WebAssembly.Exports;

/** Instantiates the packing module (default: dist/fourdgs-spark-pack.wasm of the package). */
export function loadSparkPack(source?: BufferSource | URL | string | Response): Promise<SparkPackWasm>;

export class FourdgsSplatMesh extends EngineScene {
  /** Resolves once the first instant's bytes are held (the first engine frame shows it). */
  static load(input: Input, options?: SplatMeshOptions): Promise<FourdgsSplatMesh>;
  /** Add it to the three.js scene; Spark sorts and draws it. */
  readonly mesh: SplatMesh;
  /** The engine object: Spark's packed splat data. */
  readonly splats: PackedSplats;
  /** SH bands written (min of maxShDegree and the scene's). */
  readonly shDegree: number;
  destroy(): void;
}

/** A frame's rows as Spark's packed words: the words Spark's setPackedSplat and encodeSh*Rgb
 * write, under one splatEncoding (its SH ranges widen to the coefficients packed). */
export class SparkPacker {
  /** `shCoefficients`: the SH byte map, a scene's `shCoefficients` (the library's). */
  constructor(encoding: NonNullable<PackedSplats['splatEncoding']>, wasm: SparkPackWasm,
    shCoefficients: Float32Array);
  readonly encoding: NonNullable<PackedSplats['splatEncoding']>;
  /** Room for `capacity` rows: the words pack() writes (4 a row, as many rows as Spark's
   * texture for `capacity` holds), a view on the packing module's memory to hand Spark as
   * PackedSplats.packedArray; a new view only when it grew. */
  words(capacity: number): Uint32Array;
  /** Rows [0, frame.count) (rows null) or the rows listed (the frame's `changed`: the others
   * already hold the frame's words) into words(). */
  pack(frame: FrameView, rows?: Uint32Array | null): void;
  /** SH band b (1-3) of the rows (all, or those listed) into Spark's array for that band
   * (extra.sh{b}); a coefficient beyond the band's range widens it (encoding.sh{b}Max, at most
   * 4) and packs every row again. */
  packShBand(frame: FrameView, b: 1 | 2 | 3, words: Uint32Array, rows?: Uint32Array | null): void;
}
