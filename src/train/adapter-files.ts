import { createHash, randomBytes } from 'node:crypto';
import {
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { join, relative } from 'node:path';
import { fsError, KouraiError } from '../errors.js';
import type { Agent } from '../memoir/format/agents.js';
import { fsyncDir } from '../runtime/atomic-write.js';
import { SafetensorsError } from '../tensor/errors.js';
import { readSafetensors, writeSafetensors } from '../tensor/safetensors.js';
import { loraToTensors, targetModules, tensorsToLora } from './adapter-layout.js';
import { AdapterCorruptError, BaseMismatchError } from './adapter-errors.js';
import type { BaseSpec } from './base-spec.js';
import type { LoraWeights } from './lora.js';

/**
 * Adapters on disk in PEFT's layout, one directory per agent, kind and version:
 *   $KOURAI_HOME/adapters/<agent>/<bond|council>/v<N>/adapter_model.safetensors
 *                                                    /adapter_config.json
 * adapter_config.json holds only PEFT `LoraConfig` fields, so PEFT reads it without a warning and
 * may rewrite it. What kourai needs besides (agent, kind, the base's fingerprint and
 * specification) lives in the safetensors `__metadata__`, which travels with the weights and
 * which the registry's sha256 pins. Adapters written with a `kourai` key in the config still read.
 * A version directory is written under a temporary name, every file fsynced, then renamed into
 * place and its parent fsynced: a crash, a full disk or Ctrl-C leaves either no new version or a
 * whole one, and never touches an earlier version. Reading refuses anything that is not exactly
 * what was written: a truncated or damaged safetensors file (header, offsets, sizes, the data
 * digest), a file whose sha256 is not the registry's, another agent's layout, another base.
 */
export const MODEL_FILE = 'adapter_model.safetensors';
export const CONFIG_FILE = 'adapter_config.json';

export type AdapterKindName = 'bond' | 'council';

/** adapter_config.json: exactly these PEFT `LoraConfig` fields (PEFT may add its own when it re-saves). */
export interface LoraConfigFile {
  peft_type: 'LORA';
  task_type: null;
  r: number;
  lora_alpha: number;
  lora_dropout: number;
  bias: 'none';
  fan_in_fan_out: false;
  init_lora_weights: true;
  inference_mode: true;
  target_modules: string[];
  base_model_name_or_path: string;
}

/** kourai's own record of an adapter (on disk in the safetensors metadata; version and date from the registry). */
export interface KouraiAdapterMeta {
  format: 1 | 2;
  agent: Agent;
  kind: AdapterKindName;
  version: number;
  base_fingerprint: string;
  base_spec: BaseSpec;
  /** null when read back from the files (the registry has it). */
  created_at: string | null;
}

/** An adapter's config as kourai holds it in memory: the PEFT fields and kourai's record. */
export interface AdapterConfig extends LoraConfigFile {
  kourai: KouraiAdapterMeta;
}

const LORA_CONFIG_KEYS = [
  'peft_type',
  'task_type',
  'r',
  'lora_alpha',
  'lora_dropout',
  'bias',
  'fan_in_fan_out',
  'init_lora_weights',
  'inference_mode',
  'target_modules',
  'base_model_name_or_path',
] as const;

/** What adapter_config.json holds: the LoraConfig fields only. */
export function loraConfigFile(c: AdapterConfig): LoraConfigFile {
  return Object.fromEntries(LORA_CONFIG_KEYS.map((k) => [k, c[k]])) as unknown as LoraConfigFile;
}

const META = {
  format: 'kourai.format',
  agent: 'kourai.agent',
  kind: 'kourai.kind',
  fingerprint: 'kourai.base_fingerprint',
  spec: 'kourai.base_spec',
} as const;

export function adaptersRoot(home: string): string {
  return join(home, 'adapters');
}

export function kindDir(home: string, agent: Agent, kind: AdapterKindName): string {
  return join(adaptersRoot(home), agent, kind);
}

/** Version numbers that have a directory (including ones the registry never heard of). */
export function versionsOnDisk(home: string, agent: Agent, kind: AdapterKindName): number[] {
  const dir = kindDir(home, agent, kind);
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .map((n) => /^v(\d+)$/.exec(n)?.[1])
    .filter((n): n is string => n !== undefined)
    .map(Number);
}

export interface WrittenAdapter {
  /** Relative to KOURAI_HOME. */
  path: string;
  fileSha256: string;
  config: AdapterConfig;
}

export function adapterConfig(o: {
  spec: BaseSpec;
  fingerprint: string;
  agent: Agent;
  kind: AdapterKindName;
  version: number;
  rank: number;
  alpha: number;
  createdAt: string;
}): AdapterConfig {
  return {
    peft_type: 'LORA',
    task_type: null,
    r: o.rank,
    lora_alpha: o.alpha,
    lora_dropout: 0,
    bias: 'none',
    fan_in_fan_out: false,
    init_lora_weights: true,
    inference_mode: true,
    target_modules: targetModules(o.agent),
    base_model_name_or_path: `kourai-base@${o.fingerprint}`,
    kourai: {
      format: 2,
      agent: o.agent,
      kind: o.kind,
      version: o.version,
      base_fingerprint: o.fingerprint,
      base_spec: o.spec,
      created_at: o.createdAt,
    },
  };
}

/** The safetensors bytes of an adapter (metadata: its agent, kind and base, fingerprint and specification). */
export function adapterBytes(config: AdapterConfig, lora: LoraWeights): Buffer {
  const k = config.kourai;
  return writeSafetensors(loraToTensors(k.base_spec, k.agent, lora), {
    format: 'pt',
    [META.format]: '2',
    [META.agent]: k.agent,
    [META.kind]: k.kind,
    [META.fingerprint]: k.base_fingerprint,
    [META.spec]: JSON.stringify(k.base_spec),
  });
}

/** Writes version `config.kourai.version` (which must not exist) atomically; returns its path and file digest. */
export function writeAdapterVersion(home: string, config: AdapterConfig, lora: LoraWeights): WrittenAdapter {
  const { agent, kind, version } = config.kourai;
  const parent = kindDir(home, agent, kind);
  const final = join(parent, `v${version}`);
  const tmp = join(parent, `.v${version}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  const model = adapterBytes(config, lora);
  try {
    mkdirSync(parent, { recursive: true });
    if (existsSync(final)) throw new KouraiError(`adapter directory already exists: ${final}`);
    mkdirSync(tmp);
    writeDurable(join(tmp, MODEL_FILE), model);
    writeDurable(join(tmp, CONFIG_FILE), `${JSON.stringify(loraConfigFile(config), null, 2)}\n`);
    fsyncDir(tmp);
    renameSync(tmp, final);
    fsyncDir(parent);
  } catch (err) {
    rmSync(tmp, { recursive: true, force: true });
    if (err instanceof KouraiError) throw err;
    throw fsError(err, `${agent} ${kind} adapter v${version}`, final);
  }
  return { path: relative(home, final), fileSha256: createHash('sha256').update(model).digest('hex'), config };
}

function writeDurable(path: string, data: Uint8Array | string): void {
  const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  const fd = openSync(path, 'wx', 0o644);
  try {
    for (let off = 0; off < bytes.byteLength;) off += writeSync(fd, bytes, off, bytes.byteLength - off);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

export interface ExpectedAdapter {
  agent: Agent;
  kind: AdapterKindName;
  version: number;
  /** The running base: the adapter must have been trained over it ('own': check against the base it records, for inspecting). */
  spec: BaseSpec | 'own';
  fingerprint: string;
  /** The registry's digest of the safetensors file (null: not checked, e.g. an export). */
  fileSha256: string | null;
}

export interface LoadedAdapter {
  config: AdapterConfig;
  lora: LoraWeights;
}

/** Reads and checks a version directory (absolute path). */
export function readAdapterDir(dir: string, want: ExpectedAdapter): LoadedAdapter {
  const label = `${want.agent} ${want.kind} adapter v${want.version}`;
  const hint = `restore an earlier version with \`kourai adapters rollback --agent ${want.agent} --kind ${want.kind}\`, or retrain`;
  const corrupt = (what: string): AdapterCorruptError =>
    new AdapterCorruptError(`${label} is corrupt: ${what} (${dir})`, hint);
  let configText: string;
  let bytes: Buffer;
  try {
    configText = readFileSync(join(dir, CONFIG_FILE), 'utf8');
    bytes = readFileSync(join(dir, MODEL_FILE));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT')
      throw corrupt(`${(err as NodeJS.ErrnoException).path ?? 'a file'} is missing`);
    throw fsError(err, label, dir);
  }
  let file: Partial<LoraConfigFile> & { kourai?: Partial<KouraiAdapterMeta> };
  try {
    file = JSON.parse(configText) as typeof file;
  } catch {
    throw corrupt(`${CONFIG_FILE} is not valid JSON`);
  }
  if (file?.peft_type !== 'LORA' || !Number.isInteger(file.r) || typeof file.lora_alpha !== 'number')
    throw corrupt(`${CONFIG_FILE} is not a LoRA adapter config`);
  // With the registry's hash of the whole file to check, the data section's own digest is only
  // needed to word a mismatch (below): one pass over the bytes instead of two.
  const parse = (checkDigest: boolean): ReturnType<typeof readSafetensors> => {
    try {
      return readSafetensors(bytes, { checkDigest });
    } catch (err) {
      if (err instanceof SafetensorsError) throw corrupt(`${MODEL_FILE}: ${err.message}`);
      throw err;
    }
  };
  const contents = parse(want.fileSha256 === null);
  const k = metaOf(contents.metadata, file.kourai, want.version);
  if (!k)
    throw corrupt(
      `neither ${MODEL_FILE}'s metadata nor ${CONFIG_FILE} says which agent and base the adapter belongs to`,
    );
  if (k.agent !== want.agent || k.kind !== want.kind) throw corrupt(`the adapter is for ${k.agent} ${k.kind}`);
  if (want.spec === 'own' && (typeof k.base_spec !== 'object' || k.base_spec === null))
    throw corrupt('the adapter does not record its base specification');
  const spec = want.spec === 'own' ? k.base_spec : want.spec;
  if (k.base_fingerprint !== want.fingerprint) {
    const recorded = (k.base_spec as { format?: unknown } | undefined | null)?.format;
    const older = typeof recorded === 'string' && recorded !== spec.format;
    const what = older
      ? `the earlier base format ${recorded} (base ${short(k.base_fingerprint)})`
      : `base ${short(k.base_fingerprint)}`;
    throw new BaseMismatchError(
      `${label} (${join(dir, k.format === 2 ? MODEL_FILE : CONFIG_FILE)}) was trained over ${what}, but the configured base is ${short(want.fingerprint)} (${describeEncoder(spec)}); ${want.kind === 'council' ? 'a new one comes with the next `kourai federate round`' : `retrain it with \`kourai train bond --agent ${want.agent}\``}`,
      older
        ? 'adapters over different bases are never mixed; the old version stays on disk untouched'
        : `adapters over different bases are never mixed: restore the encoder setting in config.json, or retrain with \`kourai train bond\``,
    );
  }
  if (want.fileSha256 !== null) {
    const actual = createHash('sha256').update(bytes).digest('hex');
    if (actual !== want.fileSha256) {
      parse(true); // a damaged data section is named as such
      throw corrupt(
        `${MODEL_FILE} is not the file that was written (sha256 ${actual.slice(0, 12)}…, registry ${want.fileSha256.slice(0, 12)}…)`,
      );
    }
  }
  if (contents.metadata[META.fingerprint] !== k.base_fingerprint)
    throw corrupt(
      `${MODEL_FILE} names base ${short(contents.metadata[META.fingerprint] ?? 'none')}, the config ${short(k.base_fingerprint)}`,
    );
  const r = file.r as number;
  let lora: LoraWeights;
  try {
    lora = tensorsToLora(spec, want.agent, r, contents.tensors);
  } catch (err) {
    throw corrupt(`${MODEL_FILE}: ${(err as Error).message}`);
  }
  const config: AdapterConfig = {
    ...(Object.fromEntries(LORA_CONFIG_KEYS.map((key) => [key, file[key]])) as unknown as LoraConfigFile),
    kourai: k,
  };
  return { config, lora };
}

/**
 * kourai's record of an adapter: from the safetensors metadata (format 2), else from the `kourai`
 * key older versions wrote into adapter_config.json (whose metadata lacks the specification).
 */
function metaOf(
  md: Readonly<Record<string, string>>,
  legacy: Partial<KouraiAdapterMeta> | undefined,
  version: number,
): KouraiAdapterMeta | null {
  if (md[META.format] === '2' && md[META.agent] && md[META.kind] && md[META.fingerprint]) {
    let spec: BaseSpec | null = null;
    try {
      spec = JSON.parse(md[META.spec] ?? 'null') as BaseSpec | null;
    } catch {
      spec = null;
    }
    return {
      format: 2,
      agent: md[META.agent] as Agent,
      kind: md[META.kind] as AdapterKindName,
      version,
      base_fingerprint: md[META.fingerprint] as string,
      base_spec: spec as BaseSpec,
      created_at: null,
    };
  }
  if (legacy && typeof legacy.base_fingerprint === 'string' && legacy.agent && legacy.kind) {
    return {
      format: 1,
      agent: legacy.agent,
      kind: legacy.kind,
      version: legacy.version ?? version,
      base_fingerprint: legacy.base_fingerprint,
      base_spec: legacy.base_spec as BaseSpec,
      created_at: legacy.created_at ?? null,
    };
  }
  return null;
}

function short(fp: string): string {
  return fp.replace(/^sha256:/, '').slice(0, 12);
}

export function describeEncoder(spec: BaseSpec): string {
  const hashed = `hashed n-grams (${spec.encoder.dim}) + ${spec.structure.features.length} structure features`;
  const words = `words (${spec.words.dim})`;
  return spec.semantic === null
    ? `built-in ${hashed} + ${words}`
    : `${hashed} + embeddings ${spec.semantic.model} (${spec.semantic.dim}) + ${words}`;
}
