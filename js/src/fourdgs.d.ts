// Types of the fourdgs npm package (src/fourdgs.js). docs/web.md is the guide.

/** A byte range of the file. */
export interface ByteRange { offset: number; length: number; }

/** What open(), validate() and the player accept. A string or URL is read by HTTP range
 * requests (in node, a string without a scheme is a file path). */
export type Input = string | URL | ArrayBuffer | ArrayBufferView | Blob | ReadableStream<Uint8Array>;

export interface OpenOptions {
  /** Decode SH bands up to this degree (0..3, default 3). */
  maxShDegree?: number;
  /** Threads a decode may use (threaded builds only; default 1). */
  decodeThreads?: number;
  /** Bound on the bytes a remote source keeps (default 64 MiB). */
  cacheBytes?: number;
  /** Head and tail fetched at open (default 65536 each). */
  speculativeBytes?: number;
  /** A server that ignores ranges is served from one body up to this (default 64 MiB). */
  wholeBodyLimit?: number;
  /** Attempts per request, retries included (default 4). */
  maxAttempts?: number;
  /** Extra fetch() options (default { cache: 'no-store' }). */
  fetchInit?: RequestInit;
  /** Where the .wasm is, when a bundler moved it (first call only). */
  wasmUrl?: string | URL;
  /** Bytes read so far from a ReadableStream. */
  onProgress?: (bytes: number) => void;
}

/** A refusal: `refusal` is the library's stable identifier (the format registry's), `status`
 * the C ABI status ("malformed", "truncated", "unsupported", "io", "invalid-argument", "limit",
 * "out-of-memory", "internal", "buffer-too-small", "not-found"), `offset` the byte offset. */
export class FourdgsError extends Error {
  readonly name: 'FourdgsError';
  readonly status: string;
  readonly refusal: string;
  readonly detail: string;
  readonly offset: number | null;
}

export interface Payload { offset: number; size: number; }
export interface PoseSample { time: number; rotation: number[]; translation: number[]; }

export interface SceneInfo {
  profile: string; library: string; temporalModel: 'gaussian-birth' | 'keyframe-delta' | string;
  temporalModelName: string; durationSec: number; gaussianCount: number; cutoff: number;
  aabb: number[]; shDegree: number; headerFlags: number; quantizationScheme: string;
  posOrigin: number[]; stepPos: number; stepScaleLog: number; stepRot: number; stepRgb: number;
  stepAlpha: number; stepMotion: number; stepTime: number; stepSigmaLog: number; stepSh: number;
  shDepthCount: number; shDepths: number[];
  headerAttributeCount: number; quantizationBoundCount: number; windowCount: number;
  chunkCount: number; metadataCount: number; attachmentCount: number; audioSourceCount: number;
  coordinateFrameCount: number; sensorCount: number; rigTrajectoryCount: number;
  geodeticAnchorCount: number; objectCount: number; objectTrackCount: number;
  skippedRecordCount: number; hasCamera: number; hasObjectTable: number;
  objectEmbeddingDim: number; indexBuiltByScan: number; summaryCrcVerified: number;
}

export interface ChunkInfo { t0: number; t1: number; offset: number; size: number;
  gaussianCount: number; fetchBytes: number; kind: number; }

export interface AudioSource {
  sourceId: number; legacy: number; name: string; codec: string; channelLayout: string;
  interpolation: string; startSec: number; durationSec: number; gain: number; flags: number;
  position: number[]; rotation: number[]; keyframeCount: number; payload: Payload;
  keyframes: { time: number; position: number[]; rotation: number[] }[];
}

export interface Extras {
  headerAttributes: [string, string][];
  quantizationBounds: [string, string][];
  windows: [number, number][];
  metadata: { name: string; entries: [string, string][] }[];
  attachments: { name: string; mediaType: string; payload: Payload }[];
  camera: null | { fovYDeg: number; position: number[]; target: number[]; keyframeCount: number;
    interpolation: string; loop: number;
    keyframes: { time: number; position: number[]; target: number[] }[] };
  audioSources: AudioSource[];
  coordinateFrames: { name: string; handedness: number; upAxis: number; forwardAxis: number;
    lengthUnit: number; metresPerUnit: number }[];
  sensors: { name: string; modality: string; rigName: string; cameraModel: number;
    widthPx: number; heightPx: number; fx: number; fy: number; cx: number; cy: number;
    distortion: number[]; rotation: number[]; translation: number[]; poseReference: number }[];
  rigTrajectories: { name: string; interpolation: 'linear' | 'step'; samples: PoseSample[] }[];
  geodeticAnchors: { frameName: string; latitudeDeg: number; longitudeDeg: number;
    altitudeM: number; headingDeg: number }[];
  objects: { objectId: number; label: string; anchor: number[]; hasDynamics: number;
    velocity: number[]; angularVelocity: number[]; acceleration: number[];
    embedding: number[] | null }[];
  objectTracks: { objectId: number; interpolation: 'linear' | 'step'; samples: PoseSample[] }[];
  chunks: ChunkInfo[];
}

/** The decoded §3 state (views on wasm memory: valid until the next call into the package). */
export interface StateView {
  count: number;
  position: Float32Array; scale: Float32Array; rotation: Float32Array; color: Float32Array;
  motion: Float32Array; muT: Float32Array; sigmaT: Float32Array; winLo: Float32Array;
  winHi: Float32Array; flags: Uint8Array; windowIndex: Uint32Array;
  objectId: Uint32Array | null; sourceGroup: Int32Array | null; sourceIndex: Int32Array | null;
  gaussianId: Uint32Array | null; shDegree: number; shPerGaussian: number; sh: Uint8Array;
  info: { kind: number; time: number; offset: number; length: number; t0: number; t1: number;
    level: number; chunkKind: number; deltaMode: number; depth: number;
    referenceOffset: number; keyframeOffset: number; liveCount: number };
}

/** The visible gaussians at t, packed (views on wasm memory: valid until the next call into
 * the package). SH byte b means the coefficient Scene.shCoefficients[b] (§6.5). */
export interface FrameView {
  time: number; count: number;
  center: Float32Array; scale: Float32Array; rotation: Float32Array; color: Float32Array;
  objectId: Uint32Array; source: Uint32Array; shDegree: number; shPerGaussian: number;
  sh: Uint8Array;
  /** Each row's flags byte (bit 0: never fades). */
  flags: Uint8Array;
  /** Visible gaussians left out of the rows because a value of theirs is not a finite f32 at
   * this instant (a centre beyond f32's range, a non-finite decoded value). */
  unrepresentable: number;
}

export interface AudioState { active: boolean; localTime: number; gain: number;
  position: number[]; rotation: number[]; }

export interface SourceStats { requests: number; roundTrips: number; bytesFetched: number;
  retries: number; cachedBytes: number; }

export class Scene {
  readonly info: SceneInfo;
  readonly extras: Extras;
  readonly stats: SourceStats;
  readonly libraryVersion: string;
  stateAt(t: number): Promise<StateView>;
  readAll(): Promise<StateView>;
  frameAt(t: number, options?: { maxShDegree?: number; applyObjectTracks?: boolean }): Promise<FrameView>;
  fetchRanges(t: number): ByteRange[];
  fetchCost(t: number): number;
  chunksFor(t: number): number[];
  /** Which state covers t (the library's answer): key null when none. */
  stateSpan(t: number): { key: number | null; t0: number; t1: number };
  isReady(t: number): boolean;
  /** The SH coefficient each byte of a frame's `sh` stands for (§6.5), by byte: the library's
   * map (256 values). */
  readonly shCoefficients: Float32Array;
  prefetchInstants(instants: number[], byteBudget?: number): Promise<number>;
  audioStateAt(index: number, t: number): AudioState;
  cameraAt(t: number): { position: number[]; target: number[]; fovYDeg: number };
  readPayload(payload: Payload): Promise<Uint8Array>;
  close(): void;
}

export interface Finding { severity: 'error' | 'warning'; rule: string; field: string;
  value: string; section: string; message: string; offset: number | null; }
export interface Validation { valid: boolean; errors: number; warnings: number; truncated: boolean;
  findingsCapped: boolean; fileSize: number; records: number; chunks: number;
  findings: Finding[]; }

export function open(input: Input, options?: OpenOptions): Promise<Scene>;
export function validate(input: Input, options?: OpenOptions): Promise<Validation>;
