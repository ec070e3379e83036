// fourdgs/playcanvas (src/playcanvas.js): a .4dgs scene as a PlayCanvas gsplat entity.
import type { AppBase, Entity, GSplatContainer, GraphNode } from 'playcanvas';
import type { Input } from './fourdgs.js';
import { AdapterOptions, EngineScene } from './adapter.js';

export { EngineRows, FrameInfo } from './adapter.js';

export class FourdgsGSplat extends EngineScene {
  /** Resolves once the first instant's bytes are held (the first engine frame shows it). */
  static load(app: AppBase, input: Input,
    options?: AdapterOptions & { entity?: Entity; parent?: GraphNode }): Promise<FourdgsGSplat>;
  readonly app: AppBase;
  /** The entity with the gsplat component. */
  readonly entity: Entity;
  /** The engine object: the splat data the component draws. */
  readonly container: GSplatContainer;
  /** The app's clock the Player is driven with (seconds, the sum of the app's dt). */
  readonly clock: number;
  destroy(): void;
}
