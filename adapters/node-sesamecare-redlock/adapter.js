#!/usr/bin/env node
'use strict';
// locksim worker-protocol adapter for @sesamecare-oss/redlock, the maintained fork of redlock
// v5 (same API: acquire, release, extend, using; ioredis clients): the node-redlock adapter's
// code with this module. Variants: lib:sesamecare-redlock (one server),
// lib:sesamecare-redlock-quorum (every server of the topology), lib:sesamecare-redlock-using.
// See README.md.

require('../node-redlock/adapter').main({
  pkg: '@sesamecare-oss/redlock',
  variant: 'lib:sesamecare-redlock',
  worker: '@sesamecare-oss/redlock',
});
