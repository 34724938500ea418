// markdownlint-cli2 ships JavaScript without types: what scripts/check-markdown.ts uses of it.
declare module 'markdownlint-cli2' {
  import type { Configuration, Rule } from 'markdownlint';

  export interface Options {
    config?: Configuration;
    customRules?: Rule[];
    globs?: string[];
    ignores?: string[];
  }

  /** Lints as the command line does; resolves to its exit code (0 clean, 1 issues, 2 failure). */
  export function main(params: {
    directory?: string;
    argv?: string[];
    noGlobs?: boolean;
    logMessage?: (message: string) => void;
    logError?: (message: string) => void;
    optionsOverride?: Options;
  }): Promise<number>;
}

declare module 'markdownlint-cli2/markdownlint/promise' {
  export * from 'markdownlint/promise';
}
