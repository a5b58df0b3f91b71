package org.raidfive.nbd;

/** Every raw-protocol check again, with requests run on the connection's thread. */
class NbdServerProtocolConnectionThreadTest extends NbdServerProtocolTest {
    @Override
    NbdServerConfig.Builder config() {
        return super.config().requestExecution(RequestExecution.CONNECTION_THREAD);
    }
}
