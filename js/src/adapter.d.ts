// Types shared by the engine adapters (fourdgs/playcanvas, fourdgs/three). docs/engines.md.
import type { AudioState, OpenOptions, Scene } from './fourdgs.js';

export interface PlayerOptions {
  start?: number; rate?: number; loop?: boolean; playing?: boolean; maxShDegree?: number;
  applyObjectTracks?: boolean;
  /** States ahead of the one shown whose bytes are kept on their way (default 2), as the C++
   * player's `look_ahead` counts them. */
  lookAhead?: number;
  /** No longer taken (`lookAhead` once counted instants of it): the Player throws a TypeError
   * whose `refusal` is 'invalid-option'. Typed `never` so that a caller passing it fails to
   * compile. */
  step?: never;
  byteBudget?: number;
}

/** What the Player says about a frame. `late`: its bytes had not arrived (the picture holds at
 * `shown`); `reason`: 'none', 'starting' or 'fetching'. */
export interface FrameInfo {
  time: number; shown: number; late: boolean; reason: 'none' | 'starting' | 'fetching';
  state: 'paused' | 'playing' | 'ended'; stateT0: number; stateT1: number; audio: AudioState[];
}

/** Rows as the engine holds them, decoded with the engine's own decoder. */
export interface EngineRows {
  count: number; center: Float32Array; scale: Float32Array;
  /** x, y, z, w */
  rotation: Float32Array;
  /** r, g, b, opacity */
  color: Float32Array;
  /** SH bands 1..shDegree the engine holds, per row band by band, coefficient-major with r g b
   * interleaved (fourdgs/three; absent where the engine holds none). */
  shDegree?: number; sh?: Float32Array;
}

/** A scene played into one engine object. Events: 'late' and 'frame' (CustomEvent, detail:
 * FrameInfo). */
export class EngineScene extends EventTarget {
  readonly scene: Scene;
  /** The package's Player (player.js): the clock, the look-ahead, the late-frame rule. */
  readonly player: unknown;
  /** Rows the engine object holds room for (the largest instant; grown only when needed). */
  readonly capacity: number;
  /** Rows written by the last update. */
  readonly count: number;
  readonly frameInfo: FrameInfo | null;
  /** Counters; lastFrameMs: the Player's frame; lastUploadMs: the adapter's write (from the
   * Player's frame to the engine's data ready for upload); lastSubmitMs: the engine's own call
   * that takes it (PlayCanvas uploads its textures there at once); lastRows: the rows that
   * write was given (the frame's, or those it listed as changed). */
  readonly stats: { frames: number; lateFrames: number; uploads: number; grows: number;
    lastFrameMs: number; lastUploadMs: number; lastSubmitMs: number; lastRows: number };
  readonly duration: number;
  readonly time: number;
  readonly state: 'paused' | 'playing' | 'ended';
  readonly late: boolean;
  readonly audio: AudioState[];
  play(): void;
  pause(): void;
  seek(t: number): void;
  setRate(rate: number): void;
  setLoop(loop: boolean): void;
  ready(t: number): Promise<void>;
  camera(t?: number): { position: number[]; target: number[]; fovYDeg: number } | null;
  /** One frame at the engine's clock (seconds); the adapters call it from the engine's loop. */
  update(nowSec: number): FrameInfo;
  engineRows(): EngineRows;
  close(): void;
}

export type AdapterOptions = OpenOptions & PlayerOptions;
export function largestInstant(scene: Scene): number;
