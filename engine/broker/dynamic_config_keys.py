"""Kafka 4.4's broker configs, as data: every public name with its type and default
(KAFKA_CONFIGS, what DescribeConfigs of a broker lists), and which KafkaConfig names AlterConfigs may change
at runtime (DynamicBrokerConfig.ALL_DYNAMIC_CONFIGS, with their ConfigDef type, default and
validator, and whether they may be set only per broker, never as the cluster-wide default),
and which known names it must refuse (DynamicConfig.Broker.nonDynamicProps).

Names not in either table are accepted and kept as Kafka keeps them (as unknown, hence
sensitive, configs). dynamic_config.py validates and applies them.
"""

from __future__ import annotations

# name: (type, default (None: none), per-broker only, ConfigDef validator as Kafka prints it)
DYNAMIC: dict[str, tuple[str, str | None, bool, str]] = {
    'background.threads': ('int', '10', False, '[1,...]'),
    'compression.gzip.level': ('int', '-1', False, '[1,...,9] or -1'),
    'compression.lz4.level': ('int', '9', False, '[1,...,17]'),
    'compression.type': ('string', 'producer', False, '[uncompressed, zstd, lz4, snappy, gzip, producer]'),
    'compression.zstd.level': ('int', '3', False, '[-131072,...,22]'),
    'config.providers': ('list', '', False, ''),
    'cordoned.log.dirs': ('list', '', True, ''),
    'errors.deadletterqueue.auto.create.topics.enable': ('boolean', 'false', False, ''),
    'errors.deadletterqueue.topic.name.prefix': ('string', 'dlq.', False, ''),
    'follower.fetch.last.tiered.offset.enable': ('boolean', 'false', False, ''),
    'follower.replication.throttled.rate': ('long', '9223372036854775807', False, '[0,...]'),
    'group.consumer.assignment.interval.ms': ('int', '1000', False, '[0,...]'),
    'group.consumer.assignor.offload.enable': ('boolean', 'true', False, ''),
    'group.coordinator.cached.buffer.max.bytes': ('int', '1048588', False, '[524288,...]'),
    'group.share.assignment.interval.ms': ('int', '1000', False, '[0,...]'),
    'group.share.assignor.offload.enable': ('boolean', 'true', False, ''),
    'group.streams.assignment.interval.ms': ('int', '1000', False, '[0,...]'),
    'group.streams.assignor.offload.enable': ('boolean', 'true', False, ''),
    'leader.replication.throttled.rate': ('long', '9223372036854775807', False, '[0,...]'),
    'listener.security.protocol.map': ('string', 'SASL_SSL:SASL_SSL,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT', True, ''),
    'listeners': ('list', 'PLAINTEXT://:9092', True, ''),
    'log.cleaner.backoff.ms': ('long', '15000', False, '[0,...]'),
    'log.cleaner.dedupe.buffer.size': ('long', '134217728', False, ''),
    'log.cleaner.delete.retention.ms': ('long', '86400000', False, '[0,...]'),
    'log.cleaner.io.buffer.load.factor': ('double', '0.9', False, ''),
    'log.cleaner.io.buffer.size': ('int', '524288', False, '[0,...]'),
    'log.cleaner.io.max.bytes.per.second': ('double', '1.7976931348623157E308', False, ''),
    'log.cleaner.max.compaction.lag.ms': ('long', '9223372036854775807', False, '[1,...]'),
    'log.cleaner.min.cleanable.ratio': ('double', '0.5', False, '[0,...,1]'),
    'log.cleaner.min.compaction.lag.ms': ('long', '0', False, '[0,...]'),
    'log.cleaner.threads': ('int', '1', False, '[0,...]'),
    'log.cleanup.policy': ('list', 'delete', False, '[compact, delete]'),
    'log.flush.interval.messages': ('long', '9223372036854775807', False, '[1,...]'),
    'log.flush.interval.ms': ('long', None, False, ''),
    'log.index.interval.bytes': ('int', '4096', False, '[0,...]'),
    'log.index.size.max.bytes': ('int', '10485760', False, '[4,...]'),
    'log.local.retention.bytes': ('long', '-2', False, '[-2,...]'),
    'log.local.retention.ms': ('long', '-2', False, '[-2,...]'),
    'log.message.timestamp.after.max.ms': ('long', '3600000', False, '[0,...]'),
    'log.message.timestamp.before.max.ms': ('long', '9223372036854775807', False, '[0,...]'),
    'log.message.timestamp.type': ('string', 'CreateTime', False, '[CreateTime, LogAppendTime]'),
    'log.preallocate': ('boolean', 'false', False, ''),
    'log.remote.copy.lag.bytes': ('long', '-1', False, '[-1,...]'),
    'log.remote.copy.lag.ms': ('long', '0', False, '[-1,...]'),
    'log.retention.bytes': ('long', '-1', False, ''),
    'log.retention.ms': ('long', None, False, ''),
    'log.roll.jitter.ms': ('long', None, False, ''),
    'log.roll.ms': ('long', None, False, ''),
    'log.segment.bytes': ('int', '1073741824', False, '[1048576,...]'),
    'log.segment.delete.delay.ms': ('long', '60000', False, '[0,...]'),
    'max.connection.creation.rate': ('int', '2147483647', False, '[0,...]'),
    'max.connections': ('int', '2147483647', False, '[0,...]'),
    'max.connections.per.ip': ('int', '2147483647', False, '[0,...]'),
    'max.connections.per.ip.overrides': ('string', '', False, ''),
    'max.decompressed.message.bytes': ('int', '2147483639', False, '[1,...,2147483639]'),
    'message.max.bytes': ('int', '1048588', False, '[0,...]'),
    'metric.reporters': ('list', 'org.apache.kafka.common.metrics.JmxReporter', False, ''),
    'min.insync.replicas': ('int', '1', False, '[1,...]'),
    'num.io.threads': ('int', '8', False, '[1,...]'),
    'num.network.threads': ('int', '3', False, '[1,...]'),
    'num.recovery.threads.per.data.dir': ('int', '2', False, '[1,...]'),
    'num.replica.fetchers': ('int', '1', False, '[1,...]'),
    'principal.builder.class': ('class', 'org.apache.kafka.common.security.authenticator.DefaultKafkaPrincipalBuilder', True, ''),
    'producer.id.expiration.ms': ('int', '86400000', False, '[1,...]'),
    'remote.fetch.max.wait.ms': ('int', '500', False, '[1,...]'),
    'remote.list.offsets.request.timeout.ms': ('long', '30000', False, '[1,...]'),
    'remote.log.index.file.cache.total.size.bytes': ('long', '1073741824', False, '[1,...]'),
    'remote.log.manager.copier.thread.pool.size': ('int', '10', False, '[1,...]'),
    'remote.log.manager.copy.max.bytes.per.second': ('long', '9223372036854775807', False, '[1,...]'),
    'remote.log.manager.expiration.thread.pool.size': ('int', '10', False, '[1,...]'),
    'remote.log.manager.fetch.max.bytes.per.second': ('long', '9223372036854775807', False, '[1,...]'),
    'remote.log.manager.follower.thread.pool.size': ('int', '2', False, '[1,...]'),
    'remote.log.reader.threads': ('int', '10', False, '[1,...]'),
    'replica.alter.log.dirs.io.max.bytes.per.second': ('long', '9223372036854775807', False, '[0,...]'),
    'sasl.enabled.mechanisms': ('list', 'GSSAPI', True, ''),
    'sasl.jaas.config': ('password', None, True, ''),
    'sasl.kerberos.kinit.cmd': ('string', '/usr/bin/kinit', True, ''),
    'sasl.kerberos.min.time.before.relogin': ('long', '60000', True, ''),
    'sasl.kerberos.principal.to.local.rules': ('list', 'DEFAULT', True, ''),
    'sasl.kerberos.service.name': ('string', None, True, ''),
    'sasl.kerberos.ticket.renew.jitter': ('double', '0.05', True, ''),
    'sasl.kerberos.ticket.renew.window.factor': ('double', '0.8', True, ''),
    'sasl.login.refresh.buffer.seconds': ('short', '300', True, ''),
    'sasl.login.refresh.min.period.seconds': ('short', '60', True, ''),
    'sasl.login.refresh.window.factor': ('double', '0.8', True, ''),
    'sasl.login.refresh.window.jitter': ('double', '0.05', True, ''),
    'sasl.mechanism.inter.broker.protocol': ('string', 'GSSAPI', True, ''),
    'share.coordinator.cached.buffer.max.bytes': ('int', '1048588', False, '[524288,...]'),
    'ssl.cipher.suites': ('list', '', True, ''),
    'ssl.client.auth': ('string', 'none', True, '[required, requested, none]'),
    'ssl.enabled.protocols': ('list', 'TLSv1.2,TLSv1.3', True, ''),
    'ssl.endpoint.identification.algorithm': ('string', 'https', True, ''),
    'ssl.engine.factory.class': ('class', None, True, ''),
    'ssl.key.password': ('password', None, True, ''),
    'ssl.keymanager.algorithm': ('string', 'SunX509', True, ''),
    'ssl.keystore.certificate.chain': ('password', None, True, ''),
    'ssl.keystore.key': ('password', None, True, ''),
    'ssl.keystore.location': ('string', None, True, ''),
    'ssl.keystore.password': ('password', None, True, ''),
    'ssl.keystore.type': ('string', 'JKS', True, ''),
    'ssl.protocol': ('string', 'TLSv1.3', True, ''),
    'ssl.provider': ('string', None, True, ''),
    'ssl.secure.random.implementation': ('string', None, True, ''),
    'ssl.trustmanager.algorithm': ('string', 'PKIX', True, ''),
    'ssl.truststore.certificates': ('password', None, True, ''),
    'ssl.truststore.location': ('string', None, True, ''),
    'ssl.truststore.password': ('password', None, True, ''),
    'ssl.truststore.type': ('string', 'JKS', True, ''),
    'transaction.partition.verification.enable': ('boolean', 'true', False, ''),
    'unclean.leader.election.enable': ('boolean', 'false', False, ''),
}

# KafkaConfig names that cannot be changed without a restart (DynamicConfig.Broker.nonDynamicProps)
NON_DYNAMIC = frozenset("""
add.partitions.to.txn.retry.backoff.max.ms add.partitions.to.txn.retry.backoff.ms
advertised.listeners alter.config.policy.class.name alter.log.dirs.replication.quota.window.num
alter.log.dirs.replication.quota.window.size.seconds authorizer.class.name
auto.create.topics.enable auto.leader.rebalance.enable broker.heartbeat.interval.ms broker.id
broker.rack broker.session.timeout.ms client.quota.callback.class
connection.failed.authentication.delay.ms connections.max.idle.ms connections.max.reauth.ms
controlled.shutdown.enable controller.listener.names
controller.performance.always.log.threshold.ms controller.performance.sample.period.ms
controller.quorum.append.linger.ms controller.quorum.auto.join.enable
controller.quorum.bootstrap.servers controller.quorum.election.backoff.max.ms
controller.quorum.election.timeout.ms controller.quorum.fetch.max.bytes
controller.quorum.fetch.snapshot.max.bytes controller.quorum.fetch.timeout.ms
controller.quorum.request.timeout.ms controller.quorum.retry.backoff.ms controller.quorum.voters
controller.quota.window.num controller.quota.window.size.seconds controller.socket.timeout.ms
create.topic.policy.class.name default.replication.factor
delegation.token.expiry.check.interval.ms delegation.token.expiry.time.ms
delegation.token.max.lifetime.ms delegation.token.secret.key
delete.records.purgatory.purge.interval.requests delete.topic.enable early.start.listeners
fetch.max.bytes fetch.purgatory.purge.interval.requests group.consumer.assignors
group.consumer.heartbeat.interval.ms group.consumer.max.assignment.interval.ms
group.consumer.max.heartbeat.interval.ms group.consumer.max.session.timeout.ms
group.consumer.max.size group.consumer.migration.policy group.consumer.min.assignment.interval.ms
group.consumer.min.heartbeat.interval.ms group.consumer.min.session.timeout.ms
group.consumer.regex.refresh.interval.ms group.consumer.session.timeout.ms
group.coordinator.append.linger.ms group.coordinator.background.threads
group.coordinator.rebalance.protocols group.coordinator.threads group.initial.rebalance.delay.ms
group.max.session.timeout.ms group.max.size group.min.session.timeout.ms group.share.assignors
group.share.delivery.count.limit group.share.dlq.manager.class.name
group.share.heartbeat.interval.ms group.share.initialize.retry.interval.ms
group.share.max.assignment.interval.ms group.share.max.delivery.count.limit
group.share.max.heartbeat.interval.ms group.share.max.partition.max.record.locks
group.share.max.record.lock.duration.ms group.share.max.session.timeout.ms
group.share.max.share.sessions group.share.max.size group.share.min.assignment.interval.ms
group.share.min.delivery.count.limit group.share.min.heartbeat.interval.ms
group.share.min.partition.max.record.locks group.share.min.record.lock.duration.ms
group.share.min.session.timeout.ms group.share.partition.max.record.locks
group.share.persister.class.name group.share.record.lock.duration.ms
group.share.session.timeout.ms group.streams.acceptable.recovery.lag group.streams.assignors
group.streams.heartbeat.interval.ms group.streams.initial.rebalance.delay.ms
group.streams.max.assignment.interval.ms group.streams.max.heartbeat.interval.ms
group.streams.max.session.timeout.ms group.streams.max.size group.streams.max.standby.replicas
group.streams.max.warmup.replicas group.streams.min.assignment.interval.ms
group.streams.min.heartbeat.interval.ms group.streams.min.session.timeout.ms
group.streams.min.task.offset.interval.ms group.streams.num.standby.replicas
group.streams.num.warmup.replicas group.streams.rack.aware.assignment.tags
group.streams.session.timeout.ms group.streams.task.offset.interval.ms
group.streams.topology.description.plugin.class initial.broker.registration.timeout.ms
inter.broker.listener.name internal.metadata.delete.delay.millis
internal.metadata.log.segment.bytes internal.metadata.max.batch.size.in.bytes
kafka.metrics.polling.interval.secs kafka.metrics.reporters
leader.imbalance.check.interval.seconds log.cleaner.enable log.dir log.dir.failure.timeout.ms
log.dirs log.flush.offset.checkpoint.interval.ms log.flush.scheduler.interval.ms
log.flush.start.offset.checkpoint.interval.ms log.initial.task.delay.ms
log.retention.check.interval.ms log.retention.hours log.retention.minutes log.roll.hours
log.roll.jitter.hours max.incremental.fetch.session.cache.slots max.request.partition.size.limit
metadata.log.dir metadata.log.max.record.bytes.between.snapshots
metadata.log.max.snapshot.interval.ms metadata.log.segment.bytes metadata.log.segment.ms
metadata.max.idle.interval.ms metadata.max.retention.bytes metadata.max.retention.ms
metrics.num.samples metrics.recording.level metrics.sample.window.ms node.id num.partitions
num.replica.alter.log.dirs.threads offset.metadata.max.bytes offsets.commit.timeout.ms
offsets.load.buffer.size offsets.retention.check.interval.ms offsets.retention.minutes
offsets.topic.compression.codec offsets.topic.num.partitions offsets.topic.replication.factor
offsets.topic.segment.bytes process.roles producer.id.expiration.check.interval.ms
producer.purgatory.purge.interval.requests queued.max.request.bytes queued.max.requests
quota.window.num quota.window.size.seconds remote.log.index.file.cache.ttl.ms
remote.log.manager.copy.quota.window.num remote.log.manager.copy.quota.window.size.seconds
remote.log.manager.fetch.quota.window.num remote.log.manager.fetch.quota.window.size.seconds
remote.log.manager.task.interval.ms remote.log.manager.task.retry.backoff.max.ms
remote.log.manager.task.retry.backoff.ms remote.log.manager.task.retry.jitter
remote.log.manager.thread.pool.size remote.log.metadata.custom.metadata.max.bytes
remote.log.metadata.manager.class.name remote.log.metadata.manager.class.path
remote.log.metadata.manager.impl.prefix remote.log.metadata.manager.listener.name
remote.log.reader.max.pending.tasks remote.log.storage.manager.class.name
remote.log.storage.manager.class.path remote.log.storage.manager.impl.prefix
remote.log.storage.system.enable replica.fetch.backoff.ms replica.fetch.max.bytes
replica.fetch.min.bytes replica.fetch.response.max.bytes replica.fetch.wait.max.ms
replica.high.watermark.checkpoint.interval.ms replica.lag.time.max.ms replica.selector.class
replica.socket.receive.buffer.bytes replica.socket.timeout.ms replication.quota.window.num
replication.quota.window.size.seconds request.timeout.ms sasl.client.callback.handler.class
sasl.login.callback.handler.class sasl.login.class sasl.login.connect.timeout.ms
sasl.login.read.timeout.ms sasl.login.retry.backoff.max.ms sasl.login.retry.backoff.ms
sasl.mechanism.controller.protocol sasl.oauthbearer.allow.unverified.audience
sasl.oauthbearer.allow.unverified.issuer sasl.oauthbearer.assertion.algorithm
sasl.oauthbearer.assertion.claim.aud sasl.oauthbearer.assertion.claim.exp.seconds
sasl.oauthbearer.assertion.claim.iss sasl.oauthbearer.assertion.claim.jti.include
sasl.oauthbearer.assertion.claim.nbf.seconds sasl.oauthbearer.assertion.claim.sub
sasl.oauthbearer.assertion.file sasl.oauthbearer.assertion.private.key.file
sasl.oauthbearer.assertion.private.key.passphrase sasl.oauthbearer.assertion.template.file
sasl.oauthbearer.client.credentials.client.id sasl.oauthbearer.client.credentials.client.secret
sasl.oauthbearer.clock.skew.seconds sasl.oauthbearer.expected.audience
sasl.oauthbearer.expected.issuer sasl.oauthbearer.jwks.endpoint.refresh.ms
sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms
sasl.oauthbearer.jwks.endpoint.retry.backoff.ms sasl.oauthbearer.jwks.endpoint.url
sasl.oauthbearer.jwt.retriever.class sasl.oauthbearer.jwt.validator.class sasl.oauthbearer.scope
sasl.oauthbearer.scope.claim.name sasl.oauthbearer.sub.claim.name
sasl.oauthbearer.token.endpoint.url sasl.server.callback.handler.class
sasl.server.max.receive.size security.inter.broker.protocol security.providers
server.max.startup.time.ms share.coordinator.append.linger.ms
share.coordinator.cold.partition.snapshot.interval.ms share.coordinator.load.buffer.size
share.coordinator.snapshot.update.records.per.snapshot
share.coordinator.state.topic.compression.codec share.coordinator.state.topic.min.isr
share.coordinator.state.topic.num.partitions share.coordinator.state.topic.prune.interval.ms
share.coordinator.state.topic.replication.factor share.coordinator.state.topic.segment.bytes
share.coordinator.threads share.coordinator.write.timeout.ms
share.fetch.purgatory.purge.interval.requests socket.connection.setup.timeout.max.ms
socket.connection.setup.timeout.ms socket.listen.backlog.size socket.receive.buffer.bytes
socket.request.max.bytes socket.send.buffer.bytes ssl.allow.dn.changes ssl.allow.san.changes
ssl.principal.mapping.rules telemetry.max.bytes
transaction.abort.timed.out.transaction.cleanup.interval.ms transaction.max.timeout.ms
transaction.remove.expired.transaction.cleanup.interval.ms transaction.state.log.load.buffer.size
transaction.state.log.min.isr transaction.state.log.num.partitions
transaction.state.log.replication.factor transaction.state.log.segment.bytes
transaction.two.phase.commit.enable transactional.id.expiration.ms
unclean.leader.election.interval.ms unstable.api.versions.enable unstable.feature.versions.enable
""".split())


# Every public KafkaConfig name (AbstractKafkaConfig.CONFIG_DEF less its internal configs): its
# ConfigDef type and default (None: none), which DescribeConfigs of a broker lists in full.
KAFKA_CONFIGS: dict[str, tuple[str, str | None]] = {
    'add.partitions.to.txn.retry.backoff.max.ms': ('int', '100'),
    'add.partitions.to.txn.retry.backoff.ms': ('int', '20'),
    'advertised.listeners': ('list', None),
    'alter.config.policy.class.name': ('class', None),
    'alter.log.dirs.replication.quota.window.num': ('int', '11'),
    'alter.log.dirs.replication.quota.window.size.seconds': ('int', '1'),
    'authorizer.class.name': ('string', ''),
    'auto.create.topics.enable': ('boolean', 'true'),
    'auto.leader.rebalance.enable': ('boolean', 'true'),
    'background.threads': ('int', '10'),
    'broker.heartbeat.interval.ms': ('int', '2000'),
    'broker.id': ('int', '-1'),
    'broker.rack': ('string', None),
    'broker.session.timeout.ms': ('int', '9000'),
    'client.quota.callback.class': ('class', None),
    'compression.gzip.level': ('int', '-1'),
    'compression.lz4.level': ('int', '9'),
    'compression.type': ('string', 'producer'),
    'compression.zstd.level': ('int', '3'),
    'config.providers': ('list', ''),
    'connection.failed.authentication.delay.ms': ('int', '100'),
    'connections.max.idle.ms': ('long', '600000'),
    'connections.max.reauth.ms': ('long', '0'),
    'controlled.shutdown.enable': ('boolean', 'true'),
    'controller.listener.names': ('list', None),
    'controller.quorum.append.linger.ms': ('int', '25'),
    'controller.quorum.auto.join.enable': ('boolean', 'false'),
    'controller.quorum.bootstrap.servers': ('list', ''),
    'controller.quorum.election.backoff.max.ms': ('int', '1000'),
    'controller.quorum.election.timeout.ms': ('int', '1000'),
    'controller.quorum.fetch.max.bytes': ('int', '1048576'),
    'controller.quorum.fetch.snapshot.max.bytes': ('int', '1048576'),
    'controller.quorum.fetch.timeout.ms': ('int', '2000'),
    'controller.quorum.request.timeout.ms': ('int', '2000'),
    'controller.quorum.retry.backoff.ms': ('int', '20'),
    'controller.quorum.voters': ('list', ''),
    'controller.quota.window.num': ('int', '11'),
    'controller.quota.window.size.seconds': ('int', '1'),
    'controller.socket.timeout.ms': ('int', '30000'),
    'cordoned.log.dirs': ('list', ''),
    'create.topic.policy.class.name': ('class', None),
    'default.replication.factor': ('int', '1'),
    'delegation.token.expiry.check.interval.ms': ('long', '3600000'),
    'delegation.token.expiry.time.ms': ('long', '86400000'),
    'delegation.token.max.lifetime.ms': ('long', '604800000'),
    'delegation.token.secret.key': ('password', None),
    'delete.records.purgatory.purge.interval.requests': ('int', '1'),
    'delete.topic.enable': ('boolean', 'true'),
    'early.start.listeners': ('list', None),
    'errors.deadletterqueue.auto.create.topics.enable': ('boolean', 'false'),
    'errors.deadletterqueue.topic.name.prefix': ('string', 'dlq.'),
    'fetch.max.bytes': ('int', '57671680'),
    'fetch.purgatory.purge.interval.requests': ('int', '1000'),
    'follower.fetch.last.tiered.offset.enable': ('boolean', 'false'),
    'group.consumer.assignment.interval.ms': ('int', '1000'),
    'group.consumer.assignors': ('list', 'uniform,range'),
    'group.consumer.heartbeat.interval.ms': ('int', '5000'),
    'group.consumer.max.assignment.interval.ms': ('int', '15000'),
    'group.consumer.max.heartbeat.interval.ms': ('int', '15000'),
    'group.consumer.max.session.timeout.ms': ('int', '60000'),
    'group.consumer.max.size': ('int', '2147483647'),
    'group.consumer.migration.policy': ('string', 'bidirectional'),
    'group.consumer.min.assignment.interval.ms': ('int', '0'),
    'group.consumer.min.heartbeat.interval.ms': ('int', '5000'),
    'group.consumer.min.session.timeout.ms': ('int', '45000'),
    'group.consumer.session.timeout.ms': ('int', '45000'),
    'group.coordinator.append.linger.ms': ('int', '-1'),
    'group.coordinator.background.threads': ('int', '2'),
    'group.coordinator.cached.buffer.max.bytes': ('int', '1048588'),
    'group.coordinator.rebalance.protocols': ('list', 'classic,consumer,streams'),
    'group.coordinator.threads': ('int', '4'),
    'group.initial.rebalance.delay.ms': ('int', '3000'),
    'group.max.session.timeout.ms': ('int', '1800000'),
    'group.max.size': ('int', '2147483647'),
    'group.min.session.timeout.ms': ('int', '6000'),
    'group.share.assignment.interval.ms': ('int', '1000'),
    'group.share.assignors': ('list', 'simple'),
    'group.share.delivery.count.limit': ('int', '5'),
    'group.share.heartbeat.interval.ms': ('int', '5000'),
    'group.share.max.assignment.interval.ms': ('int', '15000'),
    'group.share.max.delivery.count.limit': ('int', '10'),
    'group.share.max.heartbeat.interval.ms': ('int', '15000'),
    'group.share.max.partition.max.record.locks': ('int', '4000'),
    'group.share.max.record.lock.duration.ms': ('int', '60000'),
    'group.share.max.session.timeout.ms': ('int', '60000'),
    'group.share.max.share.sessions': ('int', '2000'),
    'group.share.max.size': ('int', '200'),
    'group.share.min.assignment.interval.ms': ('int', '0'),
    'group.share.min.delivery.count.limit': ('int', '2'),
    'group.share.min.heartbeat.interval.ms': ('int', '5000'),
    'group.share.min.partition.max.record.locks': ('int', '100'),
    'group.share.min.record.lock.duration.ms': ('int', '15000'),
    'group.share.min.session.timeout.ms': ('int', '45000'),
    'group.share.partition.max.record.locks': ('int', '2000'),
    'group.share.record.lock.duration.ms': ('int', '30000'),
    'group.share.session.timeout.ms': ('int', '45000'),
    'group.streams.assignment.interval.ms': ('int', '1000'),
    'group.streams.assignors': ('list', 'sticky'),
    'group.streams.heartbeat.interval.ms': ('int', '5000'),
    'group.streams.initial.rebalance.delay.ms': ('int', '3000'),
    'group.streams.max.assignment.interval.ms': ('int', '15000'),
    'group.streams.max.heartbeat.interval.ms': ('int', '15000'),
    'group.streams.max.session.timeout.ms': ('int', '60000'),
    'group.streams.max.size': ('int', '2147483647'),
    'group.streams.max.standby.replicas': ('int', '2'),
    'group.streams.min.assignment.interval.ms': ('int', '0'),
    'group.streams.min.heartbeat.interval.ms': ('int', '5000'),
    'group.streams.min.session.timeout.ms': ('int', '45000'),
    'group.streams.num.standby.replicas': ('int', '0'),
    'group.streams.rack.aware.assignment.tags': ('list', ''),
    'group.streams.session.timeout.ms': ('int', '45000'),
    'group.streams.topology.description.plugin.class': ('class', None),
    'initial.broker.registration.timeout.ms': ('int', '60000'),
    'inter.broker.listener.name': ('string', None),
    'kafka.metrics.polling.interval.secs': ('int', '10'),
    'kafka.metrics.reporters': ('list', ''),
    'leader.imbalance.check.interval.seconds': ('long', '300'),
    'listener.security.protocol.map': ('string', 'SASL_SSL:SASL_SSL,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT'),
    'listeners': ('list', 'PLAINTEXT://:9092'),
    'log.cleaner.backoff.ms': ('long', '15000'),
    'log.cleaner.dedupe.buffer.size': ('long', '134217728'),
    'log.cleaner.delete.retention.ms': ('long', '86400000'),
    'log.cleaner.enable': ('boolean', 'true'),
    'log.cleaner.io.buffer.load.factor': ('double', '0.9'),
    'log.cleaner.io.buffer.size': ('int', '524288'),
    'log.cleaner.io.max.bytes.per.second': ('double', '1.7976931348623157E308'),
    'log.cleaner.max.compaction.lag.ms': ('long', '9223372036854775807'),
    'log.cleaner.min.cleanable.ratio': ('double', '0.5'),
    'log.cleaner.min.compaction.lag.ms': ('long', '0'),
    'log.cleaner.threads': ('int', '1'),
    'log.cleanup.policy': ('list', 'delete'),
    'log.dir': ('list', '/tmp/kafka-logs'),
    'log.dir.failure.timeout.ms': ('long', '30000'),
    'log.dirs': ('list', None),
    'log.flush.interval.messages': ('long', '9223372036854775807'),
    'log.flush.interval.ms': ('long', None),
    'log.flush.offset.checkpoint.interval.ms': ('int', '60000'),
    'log.flush.scheduler.interval.ms': ('long', '9223372036854775807'),
    'log.flush.start.offset.checkpoint.interval.ms': ('int', '60000'),
    'log.index.interval.bytes': ('int', '4096'),
    'log.index.size.max.bytes': ('int', '10485760'),
    'log.local.retention.bytes': ('long', '-2'),
    'log.local.retention.ms': ('long', '-2'),
    'log.message.timestamp.after.max.ms': ('long', '3600000'),
    'log.message.timestamp.before.max.ms': ('long', '9223372036854775807'),
    'log.message.timestamp.type': ('string', 'CreateTime'),
    'log.preallocate': ('boolean', 'false'),
    'log.remote.copy.lag.bytes': ('long', '-1'),
    'log.remote.copy.lag.ms': ('long', '0'),
    'log.retention.bytes': ('long', '-1'),
    'log.retention.check.interval.ms': ('long', '300000'),
    'log.retention.hours': ('int', '168'),
    'log.retention.minutes': ('int', None),
    'log.retention.ms': ('long', None),
    'log.roll.hours': ('int', '168'),
    'log.roll.jitter.hours': ('int', '0'),
    'log.roll.jitter.ms': ('long', None),
    'log.roll.ms': ('long', None),
    'log.segment.bytes': ('int', '1073741824'),
    'log.segment.delete.delay.ms': ('long', '60000'),
    'max.connection.creation.rate': ('int', '2147483647'),
    'max.connections': ('int', '2147483647'),
    'max.connections.per.ip': ('int', '2147483647'),
    'max.connections.per.ip.overrides': ('string', ''),
    'max.decompressed.message.bytes': ('int', '2147483639'),
    'max.incremental.fetch.session.cache.slots': ('int', '1000'),
    'max.request.partition.size.limit': ('int', '2000'),
    'message.max.bytes': ('int', '1048588'),
    'metadata.log.dir': ('string', None),
    'metadata.log.max.record.bytes.between.snapshots': ('long', '20971520'),
    'metadata.log.max.snapshot.interval.ms': ('long', '3600000'),
    'metadata.log.segment.bytes': ('int', '1073741824'),
    'metadata.log.segment.ms': ('long', '604800000'),
    'metadata.max.idle.interval.ms': ('int', '500'),
    'metadata.max.retention.bytes': ('long', '104857600'),
    'metadata.max.retention.ms': ('long', '604800000'),
    'metric.reporters': ('list', 'org.apache.kafka.common.metrics.JmxReporter'),
    'metrics.num.samples': ('int', '2'),
    'metrics.recording.level': ('string', 'INFO'),
    'metrics.sample.window.ms': ('long', '30000'),
    'min.insync.replicas': ('int', '1'),
    'node.id': ('int', None),
    'num.io.threads': ('int', '8'),
    'num.network.threads': ('int', '3'),
    'num.partitions': ('int', '1'),
    'num.recovery.threads.per.data.dir': ('int', '2'),
    'num.replica.alter.log.dirs.threads': ('int', None),
    'num.replica.fetchers': ('int', '1'),
    'offset.metadata.max.bytes': ('int', '4096'),
    'offsets.commit.timeout.ms': ('int', '5000'),
    'offsets.load.buffer.size': ('int', '5242880'),
    'offsets.retention.check.interval.ms': ('long', '600000'),
    'offsets.retention.minutes': ('int', '10080'),
    'offsets.topic.compression.codec': ('int', '0'),
    'offsets.topic.num.partitions': ('int', '50'),
    'offsets.topic.replication.factor': ('short', '3'),
    'offsets.topic.segment.bytes': ('int', '104857600'),
    'principal.builder.class': ('class', 'org.apache.kafka.common.security.authenticator.DefaultKafkaPrincipalBuilder'),
    'process.roles': ('list', None),
    'producer.id.expiration.ms': ('int', '86400000'),
    'producer.purgatory.purge.interval.requests': ('int', '1000'),
    'queued.max.request.bytes': ('long', '-1'),
    'queued.max.requests': ('int', '500'),
    'quota.window.num': ('int', '11'),
    'quota.window.size.seconds': ('int', '1'),
    'remote.fetch.max.wait.ms': ('int', '500'),
    'remote.list.offsets.request.timeout.ms': ('long', '30000'),
    'remote.log.index.file.cache.total.size.bytes': ('long', '1073741824'),
    'remote.log.manager.copier.thread.pool.size': ('int', '10'),
    'remote.log.manager.copy.max.bytes.per.second': ('long', '9223372036854775807'),
    'remote.log.manager.copy.quota.window.num': ('int', '11'),
    'remote.log.manager.copy.quota.window.size.seconds': ('int', '1'),
    'remote.log.manager.expiration.thread.pool.size': ('int', '10'),
    'remote.log.manager.fetch.max.bytes.per.second': ('long', '9223372036854775807'),
    'remote.log.manager.fetch.quota.window.num': ('int', '11'),
    'remote.log.manager.fetch.quota.window.size.seconds': ('int', '1'),
    'remote.log.manager.follower.thread.pool.size': ('int', '2'),
    'remote.log.manager.task.interval.ms': ('long', '30000'),
    'remote.log.manager.thread.pool.size': ('int', '2'),
    'remote.log.metadata.custom.metadata.max.bytes': ('int', '128'),
    'remote.log.metadata.manager.class.name': ('string', 'org.apache.kafka.server.log.remote.metadata.storage.TopicBasedRemoteLogMetadataManager'),
    'remote.log.metadata.manager.class.path': ('string', None),
    'remote.log.metadata.manager.impl.prefix': ('string', 'rlmm.config.'),
    'remote.log.metadata.manager.listener.name': ('string', None),
    'remote.log.reader.max.pending.tasks': ('int', '100'),
    'remote.log.reader.threads': ('int', '10'),
    'remote.log.storage.manager.class.name': ('string', None),
    'remote.log.storage.manager.class.path': ('string', None),
    'remote.log.storage.manager.impl.prefix': ('string', 'rsm.config.'),
    'remote.log.storage.system.enable': ('boolean', 'false'),
    'replica.fetch.backoff.ms': ('int', '1000'),
    'replica.fetch.max.bytes': ('int', '1048576'),
    'replica.fetch.min.bytes': ('int', '1'),
    'replica.fetch.response.max.bytes': ('int', '10485760'),
    'replica.fetch.wait.max.ms': ('int', '500'),
    'replica.high.watermark.checkpoint.interval.ms': ('long', '5000'),
    'replica.lag.time.max.ms': ('long', '30000'),
    'replica.selector.class': ('string', None),
    'replica.socket.receive.buffer.bytes': ('int', '65536'),
    'replica.socket.timeout.ms': ('int', '30000'),
    'replication.quota.window.num': ('int', '11'),
    'replication.quota.window.size.seconds': ('int', '1'),
    'request.timeout.ms': ('int', '30000'),
    'sasl.client.callback.handler.class': ('class', None),
    'sasl.enabled.mechanisms': ('list', 'GSSAPI'),
    'sasl.jaas.config': ('password', None),
    'sasl.kerberos.kinit.cmd': ('string', '/usr/bin/kinit'),
    'sasl.kerberos.min.time.before.relogin': ('long', '60000'),
    'sasl.kerberos.principal.to.local.rules': ('list', 'DEFAULT'),
    'sasl.kerberos.service.name': ('string', None),
    'sasl.kerberos.ticket.renew.jitter': ('double', '0.05'),
    'sasl.kerberos.ticket.renew.window.factor': ('double', '0.8'),
    'sasl.login.callback.handler.class': ('class', None),
    'sasl.login.class': ('class', None),
    'sasl.login.connect.timeout.ms': ('int', None),
    'sasl.login.read.timeout.ms': ('int', None),
    'sasl.login.refresh.buffer.seconds': ('short', '300'),
    'sasl.login.refresh.min.period.seconds': ('short', '60'),
    'sasl.login.refresh.window.factor': ('double', '0.8'),
    'sasl.login.refresh.window.jitter': ('double', '0.05'),
    'sasl.login.retry.backoff.max.ms': ('long', '10000'),
    'sasl.login.retry.backoff.ms': ('long', '100'),
    'sasl.mechanism.controller.protocol': ('string', 'GSSAPI'),
    'sasl.mechanism.inter.broker.protocol': ('string', 'GSSAPI'),
    'sasl.oauthbearer.allow.unverified.audience': ('boolean', 'false'),
    'sasl.oauthbearer.allow.unverified.issuer': ('boolean', 'false'),
    'sasl.oauthbearer.assertion.algorithm': ('string', 'RS256'),
    'sasl.oauthbearer.assertion.claim.aud': ('string', None),
    'sasl.oauthbearer.assertion.claim.exp.seconds': ('int', '300'),
    'sasl.oauthbearer.assertion.claim.iss': ('string', None),
    'sasl.oauthbearer.assertion.claim.jti.include': ('boolean', 'false'),
    'sasl.oauthbearer.assertion.claim.nbf.seconds': ('int', '60'),
    'sasl.oauthbearer.assertion.claim.sub': ('string', None),
    'sasl.oauthbearer.assertion.file': ('string', None),
    'sasl.oauthbearer.assertion.private.key.file': ('string', None),
    'sasl.oauthbearer.assertion.private.key.passphrase': ('password', None),
    'sasl.oauthbearer.assertion.template.file': ('string', None),
    'sasl.oauthbearer.client.credentials.client.id': ('string', None),
    'sasl.oauthbearer.client.credentials.client.secret': ('password', None),
    'sasl.oauthbearer.clock.skew.seconds': ('int', '30'),
    'sasl.oauthbearer.expected.audience': ('list', ''),
    'sasl.oauthbearer.expected.issuer': ('string', None),
    'sasl.oauthbearer.jwks.endpoint.refresh.ms': ('long', '3600000'),
    'sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms': ('long', '10000'),
    'sasl.oauthbearer.jwks.endpoint.retry.backoff.ms': ('long', '100'),
    'sasl.oauthbearer.jwks.endpoint.url': ('string', None),
    'sasl.oauthbearer.jwt.retriever.class': ('class', 'org.apache.kafka.common.security.oauthbearer.DefaultJwtRetriever'),
    'sasl.oauthbearer.jwt.validator.class': ('class', 'org.apache.kafka.common.security.oauthbearer.DefaultJwtValidator'),
    'sasl.oauthbearer.scope': ('string', None),
    'sasl.oauthbearer.scope.claim.name': ('string', 'scope'),
    'sasl.oauthbearer.sub.claim.name': ('string', 'sub'),
    'sasl.oauthbearer.token.endpoint.url': ('string', None),
    'sasl.server.callback.handler.class': ('class', None),
    'sasl.server.max.receive.size': ('int', '524288'),
    'security.inter.broker.protocol': ('string', 'PLAINTEXT'),
    'security.providers': ('string', None),
    'share.coordinator.append.linger.ms': ('int', '-1'),
    'share.coordinator.cached.buffer.max.bytes': ('int', '1048588'),
    'share.coordinator.load.buffer.size': ('int', '5242880'),
    'share.coordinator.snapshot.update.records.per.snapshot': ('int', '500'),
    'share.coordinator.state.topic.compression.codec': ('int', '0'),
    'share.coordinator.state.topic.min.isr': ('short', '2'),
    'share.coordinator.state.topic.num.partitions': ('int', '50'),
    'share.coordinator.state.topic.replication.factor': ('short', '3'),
    'share.coordinator.state.topic.segment.bytes': ('int', '104857600'),
    'share.coordinator.threads': ('int', '1'),
    'share.coordinator.write.timeout.ms': ('int', '5000'),
    'share.fetch.purgatory.purge.interval.requests': ('int', '1000'),
    'socket.connection.setup.timeout.max.ms': ('long', '30000'),
    'socket.connection.setup.timeout.ms': ('long', '10000'),
    'socket.listen.backlog.size': ('int', '50'),
    'socket.receive.buffer.bytes': ('int', '102400'),
    'socket.request.max.bytes': ('int', '104857600'),
    'socket.send.buffer.bytes': ('int', '102400'),
    'ssl.allow.dn.changes': ('boolean', 'false'),
    'ssl.allow.san.changes': ('boolean', 'false'),
    'ssl.cipher.suites': ('list', ''),
    'ssl.client.auth': ('string', 'none'),
    'ssl.enabled.protocols': ('list', 'TLSv1.2,TLSv1.3'),
    'ssl.endpoint.identification.algorithm': ('string', 'https'),
    'ssl.engine.factory.class': ('class', None),
    'ssl.key.password': ('password', None),
    'ssl.keymanager.algorithm': ('string', 'SunX509'),
    'ssl.keystore.certificate.chain': ('password', None),
    'ssl.keystore.key': ('password', None),
    'ssl.keystore.location': ('string', None),
    'ssl.keystore.password': ('password', None),
    'ssl.keystore.type': ('string', 'JKS'),
    'ssl.principal.mapping.rules': ('string', 'DEFAULT'),
    'ssl.protocol': ('string', 'TLSv1.3'),
    'ssl.provider': ('string', None),
    'ssl.secure.random.implementation': ('string', None),
    'ssl.trustmanager.algorithm': ('string', 'PKIX'),
    'ssl.truststore.certificates': ('password', None),
    'ssl.truststore.location': ('string', None),
    'ssl.truststore.password': ('password', None),
    'ssl.truststore.type': ('string', 'JKS'),
    'telemetry.max.bytes': ('int', '1048576'),
    'transaction.abort.timed.out.transaction.cleanup.interval.ms': ('int', '10000'),
    'transaction.max.timeout.ms': ('int', '900000'),
    'transaction.partition.verification.enable': ('boolean', 'true'),
    'transaction.remove.expired.transaction.cleanup.interval.ms': ('int', '3600000'),
    'transaction.state.log.load.buffer.size': ('int', '5242880'),
    'transaction.state.log.min.isr': ('int', '2'),
    'transaction.state.log.num.partitions': ('int', '50'),
    'transaction.state.log.replication.factor': ('short', '3'),
    'transaction.state.log.segment.bytes': ('int', '104857600'),
    'transaction.two.phase.commit.enable': ('boolean', 'false'),
    'transactional.id.expiration.ms': ('int', '604800000'),
    'unclean.leader.election.enable': ('boolean', 'false'),
}
