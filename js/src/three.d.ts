// fourdgs/three (src/three.js): a .4dgs scene as a Spark SplatMesh for three.js.
import type { PackedSplats, SplatMesh } from '@sparkjsdev/spark';
import type { Input } from './fourdgs.js';
import { AdapterOptions, EngineScene } from './adapter.js';

export { EngineRows, FrameInfo } from './adapter.js';

export class FourdgsSplatMesh extends EngineScene {
  static load(input: Input, options?: AdapterOptions): Promise<FourdgsSplatMesh>;
  /** Add it to the three.js scene; Spark sorts and draws it. */
  readonly mesh: SplatMesh;
  /** The engine object: Spark's packed splat data. */
  readonly splats: PackedSplats;
  /** SH bands written (min of maxShDegree and the scene's). */
  readonly shDegree: number;
  destroy(): void;
}
