// Original file: proto/platform/v1/osv.proto


/**
 * A package in an ecosystem, named by name and ecosystem or by a package URL.
 */
export interface Package {
  /**
   * Name of the package as its ecosystem spells it.
   */
  'name'?: (string);
  /**
   * The ecosystem (for example "PyPI", "npm", "Debian:12"); requests are case-sensitive.
   */
  'ecosystem'?: (string);
  /**
   * A package URL (purl), instead of `name` and `ecosystem`.
   */
  'purl'?: (string);
}

/**
 * A package in an ecosystem, named by name and ecosystem or by a package URL.
 */
export interface Package__Output {
  /**
   * Name of the package as its ecosystem spells it.
   */
  'name'?: (string);
  /**
   * The ecosystem (for example "PyPI", "npm", "Debian:12"); requests are case-sensitive.
   */
  'ecosystem'?: (string);
  /**
   * A package URL (purl), instead of `name` and `ecosystem`.
   */
  'purl'?: (string);
}
