/**
 * Stand-ins of the OpenAI, Anthropic and Gemini HTTP APIs for tests: real servers on 127.0.0.1 that page their model
 * directories, answer inference requests and refuse in each provider's documented error shape, script failures and
 * delays, and record every request. See `standins.test.ts` for each behaviour in use.
 */
import { ANTHROPIC_ERRORS } from './anthropic.standin.ts';
import { GEMINI_ERRORS } from './gemini.standin.ts';
import { OPENAI_ERRORS } from './openai.standin.ts';

export { startStandin, type Standin } from './standin-server.ts';
export { RAW_ANSWERS } from './answers.ts';
export type { ErrorSpec, RawAnswer, RecordedRequest, StandinDialect, StandinModel, StandinOptions } from './standin.types.ts';

/** Each provider's documented errors, ready for `Standin.fail` (a stand-in refuses another dialect's error). */
export const PROVIDER_ERRORS = { openai: OPENAI_ERRORS, anthropic: ANTHROPIC_ERRORS, gemini: GEMINI_ERRORS } as const;
